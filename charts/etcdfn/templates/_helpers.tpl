{{/*
Named templates shared by the chart. Templates use a small subset of Helm's template language
(values, .Release/.Chart, if/else/with/range, include, toYaml, nindent, quote, default, eq) so that
test/support/helm-template.ts can render them in the unit tests; keep it that way.
*/}}

{{/* Labels on every object the chart creates. */}}
{{- define "etcdfn.labels" -}}
{{ include "etcdfn.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: etcdfn
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- with .Values.extraLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The labels that select the standalone Deployment's Pods (never change them on upgrade). */}}
{{- define "etcdfn.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The operator image. */}}
{{- define "etcdfn.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* Environment every function container gets besides FUNCTION_TARGET (a list, without the key). */}}
{{- define "etcdfn.env" -}}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: ETCD_IMAGE_REPOSITORY
  value: {{ .Values.etcd.imageRepository | quote }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Image, pull policy, resources and the restricted security context of an operator container. */}}
{{- define "etcdfn.container" -}}
image: {{ include "etcdfn.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
{{- with .Values.resources }}
resources:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  readOnlyRootFilesystem: true
  allowPrivilegeEscalation: false
  capabilities:
    drop: [ALL]
  seccompProfile:
    type: RuntimeDefault
{{- end }}
