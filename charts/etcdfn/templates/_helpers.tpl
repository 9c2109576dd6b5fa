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

{{/* Labels of the operator's Pods: each cluster's NetworkPolicy admits Pods of the release namespace
labelled etcdfn.io/component=operator to etcd's client port, and no other Pod there. */}}
{{- define "etcdfn.podLabels" -}}
{{ include "etcdfn.labels" . }}
etcdfn.io/component: operator
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
# The installed image, digest included: every Pod etcdfn creates that runs its own programs (a
# restore's init containers, snapshot and delete Jobs) runs this one.
- name: ETCDFN_IMAGE
  value: {{ include "etcdfn.image" . | quote }}
{{- with .Values.watchNamespaces }}
# A namespaced install: the resync tick lists these namespaces only.
- name: ETCDFN_WATCH_NAMESPACES
  value: {{ join "," . | quote }}
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

{{/* The operator's rules in the namespaces it runs clusters in: exactly the calls the functions make
(test/integration/rbac.test.ts scans the code and compares): no watch (functions read, they do not
watch), Secrets get/create/update only, update on the finalizers of every kind that owns objects with
blockOwnerDeletion (needed where the OwnerReferencesPermissionEnforcement admission plugin is on). */}}
{{- define "etcdfn.operatorRules" -}}
- apiGroups: [etcdfn.io]
  resources: [etcdclusters]
  verbs: [get, list]
- apiGroups: [etcdfn.io]
  resources: [etcdmembers]
  verbs: [get, list, create, update, patch, delete]
- apiGroups: [etcdfn.io]
  resources: [etcdsnapshots]
  verbs: [get, list, create, update, delete]
- apiGroups: [etcdfn.io]
  resources: [etcdsnapshotschedules]
  verbs: [get, list]
- apiGroups: [etcdfn.io]
  resources: [etcdclusters/status, etcdsnapshots/status, etcdsnapshotschedules/status]
  verbs: [update]
- apiGroups: [etcdfn.io]
  resources: [etcdmembers/status]
  verbs: [update, patch]
- apiGroups: [etcdfn.io]
  resources: [etcdclusters/finalizers, etcdmembers/finalizers, etcdsnapshotschedules/finalizers]
  verbs: [update]
# The snapshot Job's owner reference (blockOwnerDeletion).
- apiGroups: [etcdfn.io]
  resources: [etcdsnapshots/finalizers]
  verbs: [update]
- apiGroups: ['']
  resources: [pods]
  verbs: [get, list, create, patch, delete]
- apiGroups: ['']
  resources: [persistentvolumeclaims]
  verbs: [get, create, patch]
# Snapshots to a PVC: one Job per attempt, deleted once its result is in the EtcdSnapshot's status.
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, create, delete]
- apiGroups: ['']
  resources: [services]
  verbs: [get, create, patch]
- apiGroups: ['']
  resources: [secrets]
  # create/update: the auto TLS provider's CA and certificates (shared/reconcile/auto-tls.ts), the
  # generated root password Secret and the operator's applied copy (auth).
  verbs: [get, create, update]
- apiGroups: [cert-manager.io]
  resources: [certificates]
  # The certManager provider's Certificates (shared/reconcile/cert-manager.ts).
  verbs: [get, create, update]
- apiGroups: ['']
  resources: [events]
  verbs: [create, patch]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [get, create, patch, delete]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, create, patch, delete]
# PingSources: run-snapshot, one per EtcdSnapshotSchedule (its own timing, shared/plan/schedule/ping.ts)
# and per unfinished EtcdSnapshot; reconcile-cluster, one per cluster whose restore waits (shared/plan/wake/wake.ts)
- apiGroups: [sources.knative.dev]
  resources: [pingsources]
  verbs: [get, create, update, delete]
{{- end }}

{{/* Cluster-scoped reads, which no Role can grant: A member whose node is gone (shared/plan/member/node-loss.ts): is the Pod's node there, is */}}
{{- define "etcdfn.clusterScopedRules" -}}
# A member whose node is gone (shared/plan/member/node-loss.ts): is the Pod's node there, is
# the member's volume tied to a node (its PersistentVolume's node affinity)?
- apiGroups: ['']
  resources: [nodes, persistentvolumes]
  verbs: [get]
{{- end }}

{{/* What the ApiServerSources (or the standalone bridge) watch. */}}
{{- define "etcdfn.sourceRules" -}}
- apiGroups: [etcdfn.io]
  resources: [etcdclusters, etcdmembers, etcdsnapshots, etcdsnapshotschedules]
  verbs: [get, list, watch]
- apiGroups: ['']
  resources: [pods, persistentvolumeclaims]
  verbs: [get, list, watch]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, list, watch]
{{- end }}

{{/* A Role with these rules and its RoleBinding to a ServiceAccount of the release, in one namespace:
dict root, namespace, name, rules (text), serviceAccount. */}}
{{- define "etcdfn.namespacedGrant" -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
  labels:
    {{- include "etcdfn.labels" .root | nindent 4 }}
rules:
  {{- .rules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
  labels:
    {{- include "etcdfn.labels" .root | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ .name }}
subjects:
  - kind: ServiceAccount
    name: {{ .serviceAccount }}
    namespace: {{ .root.Release.Namespace }}
{{- end }}
