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
{{- with .Values.etcd.imageDigests }}
- name: ETCD_IMAGE_DIGESTS
  value: {{ $pairs := list }}{{ range $version, $digest := . }}{{ $pairs = append $pairs (printf "%s=%s" $version $digest) }}{{ end }}{{ join "," $pairs | quote }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Sender authentication (Knative Eventing OIDC, docs/security.md): the audience each Trigger asks
the Broker to put in its token for a function, and the service account Knative creates for each
Trigger (knative.dev/eventing pkg/auth: `<name>-oidc-<group>-<kind>`, lower case; our Trigger names
are short enough never to be shortened with a hash), whose token the Broker sends. */}}
{{- define "etcdfn.oidcAudience" -}}
etcdfn.io/{{ .root.Release.Namespace }}/{{ .function }}
{{- end }}
{{- define "etcdfn.oidcSubject" -}}
system:serviceaccount:{{ .root.Release.Namespace }}:{{ .trigger }}-oidc-eventing.knative.dev-trigger
{{- end }}

{{/* The env that turns the check on in one function: dead-letter takes events from every Trigger's
dead-letter delivery, the others from their own Trigger. The issuer's discovery asks the API server
with the Pod's own token, trusting the cluster CA. */}}
{{- define "etcdfn.oidcEnv" -}}
{{- $root := .root }}
{{- $subjects := list }}
{{- if eq .function "dead-letter" }}
{{- range include "etcdfn.functions" $root | fromYamlArray }}
{{- $subjects = append $subjects (include "etcdfn.oidcSubject" (dict "root" $root "trigger" .name)) }}
{{- end }}
{{- else }}
{{- $subjects = list (include "etcdfn.oidcSubject" (dict "root" $root "trigger" .function)) }}
{{- end }}
- name: ETCDFN_OIDC_ISSUER
  value: {{ required "oidc.issuer is required when oidc.enabled (kubectl get --raw /.well-known/openid-configuration shows it)" $root.Values.oidc.issuer | quote }}
- name: ETCDFN_OIDC_AUDIENCE
  value: {{ include "etcdfn.oidcAudience" (dict "root" $root "function" .function) | quote }}
- name: ETCDFN_OIDC_SUBJECTS
  value: {{ join "," $subjects | quote }}
{{- with $root.Values.oidc.jwksUrl }}
- name: ETCDFN_OIDC_JWKS_URL
  value: {{ . | quote }}
{{- end }}
- name: ETCDFN_OIDC_FETCH_TOKEN_FILE
  value: /var/run/secrets/kubernetes.io/serviceaccount/token
- name: NODE_EXTRA_CA_CERTS
  value: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
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
