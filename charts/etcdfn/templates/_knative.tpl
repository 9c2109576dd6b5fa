{{/*
The Broker, sources and Triggers of knative/, in the release namespace. Rendered as objects in
knative mode (broker.yaml, sources.yaml, triggers.yaml) and as files in the standalone bridge's
ConfigMap (standalone.yaml), so both modes route events the same way.
*/}}

{{/* A delivery complete in itself (a Trigger's delivery replaces the Broker's whole): the timeout
of each attempt (the function's request limit plus 60 s, since a cold start and queueing count
against it; a shorter one delivers the event again while the first call runs), retries with
exponential back-off, and the dead-letter function as the sink. */}}
{{- define "etcdfn.delivery" -}}
timeout: PT{{ add .timeoutSeconds 60 }}S
retry: 6
backoffPolicy: exponential
backoffDelay: PT1S
deadLetterSink:
  ref:
    apiVersion: serving.knative.dev/v1
    kind: Service
    name: dead-letter
  {{- with .audience }}
  audience: {{ . }}
  {{- end }}
{{- end }}

{{/* One Broker carries every etcdfn event. Its delivery is only the fallback: every Trigger states
its own. A function answers 409/429/5xx for "try again" and 400 for an event that can never succeed. */}}
{{- define "etcdfn.broker" -}}
apiVersion: eventing.knative.dev/v1
kind: Broker
metadata:
  name: etcdfn
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "etcdfn.labels" . | nindent 4 }}
spec:
  delivery:
    {{- include "etcdfn.delivery" (dict "timeoutSeconds" 600) | nindent 4 }}
{{- end }}

{{/* The namespaces the sources watch: every one, or the watchNamespaces by name. */}}
{{- define "etcdfn.namespaceSelector" -}}
{{- if .Values.watchNamespaces -}}
matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: In
    values: {{ toJson .Values.watchNamespaces }}
{{- else -}}
{}
{{- end }}
{{- end }}

{{/* Two ApiServerSources (the etcdfn resources; the objects etcdfn creates, selected by the
labels) in Reference mode, and the PingSource tick: ApiServerSource never resyncs and drops events
after its retries, so the tick is the safety net (knative/sources.yaml says more). */}}
{{- define "etcdfn.sources" -}}
apiVersion: sources.knative.dev/v1
kind: ApiServerSource
metadata:
  name: etcdfn-resources
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "etcdfn.labels" . | nindent 4 }}
spec:
  mode: Reference
  serviceAccountName: etcdfn-source
  namespaceSelector:
    {{- include "etcdfn.namespaceSelector" . | nindent 4 }}
  resources:
    - apiVersion: etcdfn.io/v1alpha1
      kind: EtcdCluster
    - apiVersion: etcdfn.io/v1alpha1
      kind: EtcdMember
    - apiVersion: etcdfn.io/v1alpha1
      kind: EtcdSnapshot
    - apiVersion: etcdfn.io/v1alpha1
      kind: EtcdSnapshotSchedule
  sink:
    ref:
      apiVersion: eventing.knative.dev/v1
      kind: Broker
      name: etcdfn
---
apiVersion: sources.knative.dev/v1
kind: ApiServerSource
metadata:
  name: etcdfn-owned
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "etcdfn.labels" . | nindent 4 }}
spec:
  mode: Reference
  serviceAccountName: etcdfn-source
  namespaceSelector:
    {{- include "etcdfn.namespaceSelector" . | nindent 4 }}
  resources:
    - apiVersion: v1
      kind: Pod
      selector:
        matchExpressions:
          - { key: etcdfn.io/cluster, operator: Exists }
    - apiVersion: v1
      kind: PersistentVolumeClaim
      selector:
        matchExpressions:
          - { key: etcdfn.io/cluster, operator: Exists }
    - apiVersion: batch/v1
      kind: Job
      selector:
        matchExpressions:
          - { key: etcdfn.io/cluster, operator: Exists }
  sink:
    ref:
      apiVersion: eventing.knative.dev/v1
      kind: Broker
      name: etcdfn
---
apiVersion: sources.knative.dev/v1
kind: PingSource
metadata:
  name: etcdfn-tick
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "etcdfn.labels" . | nindent 4 }}
spec:
  schedule: {{ .Values.tick.schedule | quote }}
  contentType: application/json
  data: '{"tick":"resync"}'
  sink:
    ref:
      apiVersion: eventing.knative.dev/v1
      kind: Broker
      name: etcdfn
{{- end }}

{{/* Routing: which events reach which function (CloudEvents Subscriptions filters on the attributes
ApiServerSource sets; Knative admits one attribute per exact/prefix/suffix, hence the all: pairs).
A deletion with a finalizer arrives as an update (deletionTimestamp set); finalize-member checks it. */}}
{{- define "etcdfn.triggers" -}}
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: reconcile-cluster
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "etcdfn.labels" . | nindent 4 }}
spec:
  broker: etcdfn
  filters:
    - any:
        - all:
            - exact: { apiversion: etcdfn.io/v1alpha1 }
            - exact: { kind: EtcdCluster }
        - all:
            - exact: { apiversion: etcdfn.io/v1alpha1 }
            - exact: { kind: EtcdMember }
        - all:
            - exact: { type: dev.knative.sources.ping }
            - suffix: { source: /pingsources/etcdfn-tick }
        # A cluster's own wake-up while its restore waits on the user (shared/plan/wake/cluster-wake.ts).
        - all:
            - exact: { type: dev.knative.sources.ping }
            - suffix: { source: -etcdfn-cluster-wake }
  subscriber:
    ref:
      apiVersion: serving.knative.dev/v1
      kind: Service
      name: reconcile-cluster
    {{- if .Values.oidc.enabled }}
    audience: {{ include "etcdfn.oidcAudience" (dict "root" . "function" "reconcile-cluster") }}
    {{- end }}
  delivery:
    {{- include "etcdfn.delivery" (dict "timeoutSeconds" .Values.knative.functions.reconcileCluster.timeoutSeconds "audience" (and .Values.oidc.enabled (include "etcdfn.oidcAudience" (dict "root" . "function" "dead-letter")))) | nindent 4 }}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: reconcile-member
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "etcdfn.labels" . | nindent 4 }}
spec:
  broker: etcdfn
  filters:
    - any:
        - all:
            - exact: { apiversion: etcdfn.io/v1alpha1 }
            - exact: { kind: EtcdMember }
        - all:
            - exact: { apiversion: v1 }
            - exact: { kind: Pod }
        - all:
            - exact: { apiversion: v1 }
            - exact: { kind: PersistentVolumeClaim }
        - all:
            - exact: { type: dev.knative.sources.ping }
            - suffix: { source: /pingsources/etcdfn-tick }
  subscriber:
    ref:
      apiVersion: serving.knative.dev/v1
      kind: Service
      name: reconcile-member
    {{- if .Values.oidc.enabled }}
    audience: {{ include "etcdfn.oidcAudience" (dict "root" . "function" "reconcile-member") }}
    {{- end }}
  delivery:
    {{- include "etcdfn.delivery" (dict "timeoutSeconds" .Values.knative.functions.reconcileMember.timeoutSeconds "audience" (and .Values.oidc.enabled (include "etcdfn.oidcAudience" (dict "root" . "function" "dead-letter")))) | nindent 4 }}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: finalize-member
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "etcdfn.labels" . | nindent 4 }}
spec:
  broker: etcdfn
  filters:
    - all:
        - all:
            - exact: { apiversion: etcdfn.io/v1alpha1 }
            - exact: { kind: EtcdMember }
        - not:
            suffix: { type: .add }
  subscriber:
    ref:
      apiVersion: serving.knative.dev/v1
      kind: Service
      name: finalize-member
    {{- if .Values.oidc.enabled }}
    audience: {{ include "etcdfn.oidcAudience" (dict "root" . "function" "finalize-member") }}
    {{- end }}
  delivery:
    {{- include "etcdfn.delivery" (dict "timeoutSeconds" .Values.knative.functions.finalizeMember.timeoutSeconds "audience" (and .Values.oidc.enabled (include "etcdfn.oidcAudience" (dict "root" . "function" "dead-letter")))) | nindent 4 }}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: run-snapshot
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "etcdfn.labels" . | nindent 4 }}
spec:
  broker: etcdfn
  filters:
    - any:
        - all:
            - exact: { apiversion: etcdfn.io/v1alpha1 }
            - exact: { kind: EtcdSnapshot }
        - all:
            - exact: { apiversion: etcdfn.io/v1alpha1 }
            - exact: { kind: EtcdSnapshotSchedule }
        - all:
            - exact: { apiversion: batch/v1 }
            - exact: { kind: Job }
        - exact: { type: dev.knative.sources.ping }
  subscriber:
    ref:
      apiVersion: serving.knative.dev/v1
      kind: Service
      name: run-snapshot
    {{- if .Values.oidc.enabled }}
    audience: {{ include "etcdfn.oidcAudience" (dict "root" . "function" "run-snapshot") }}
    {{- end }}
  delivery:
    {{- include "etcdfn.delivery" (dict "timeoutSeconds" .Values.knative.functions.runSnapshot.timeoutSeconds "audience" (and .Values.oidc.enabled (include "etcdfn.oidcAudience" (dict "root" . "function" "dead-letter")))) | nindent 4 }}
{{- end }}

{{/* The standalone bridge's ConfigMap data: the same Broker, sources and Triggers as files. */}}
{{- define "etcdfn.routingData" -}}
broker.yaml: |
  {{- include "etcdfn.broker" . | nindent 2 }}
sources.yaml: |
  {{- include "etcdfn.sources" . | nindent 2 }}
triggers.yaml: |
  {{- include "etcdfn.triggers" . | nindent 2 }}
{{- end }}
