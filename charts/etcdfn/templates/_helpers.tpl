{{/* Named templates shared by the chart. */}}

{{/* The four functions: name, values key under knative.functions, standalone loopback port. */}}
{{- define "etcdfn.functions" -}}
- { name: reconcile-cluster, key: reconcileCluster, port: 8081 }
- { name: reconcile-member, key: reconcileMember, port: 8082 }
- { name: finalize-member, key: finalizeMember, port: 8083 }
- { name: run-snapshot, key: runSnapshot, port: 8084 }
{{- end }}

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

{{/* The operator image: repository:tag, or repository:tag@digest when a digest pins it. */}}
{{- define "etcdfn.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- with .Values.image.digest }}@{{ . }}{{ end }}
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

{{/* Image, pull policy, resources and the restricted security context of an operator container.
The root filesystem is read-only: the programs write nothing but logs to stdout. */}}
{{- define "etcdfn.container" -}}
image: {{ include "etcdfn.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
resources:
  {{- toYaml .Values.resources | nindent 2 }}
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
