{{/*
The keeper's rights in each namespace it keeps (the Deployment's, and its post-delete hook's).
*/}}
{{- define "job-sweeper.keeperRules" -}}
- apiGroups: [batch]
  resources: [jobs]
  # watch: one informer; patch: its finalizer and the annotations that say where the logs are
  verbs: [get, list, watch, patch]
- apiGroups: ['']
  resources: [pods]
  # delete: the pods of a held Job deleted while they ran, which nothing else stops while it is
  # held (the garbage collector waits for the Job to go); their last lines are followed first
  verbs: [list, delete]
- apiGroups: ['']
  resources: [pods/log]
  verbs: [get]
- apiGroups: ['']
  resources: [events]
  # list: why a Job failed (job.json); create: LogsNotArchived when a hold ends unarchived
  verbs: [create, list]
{{- end -}}

{{/*
The keeper's arguments and environment (the Deployment's, and its post-delete hook's).
*/}}
{{- define "job-sweeper.keeperArgs" -}}
- keeper
{{- if .Values.namespaces }}
- --namespace
- {{ join "," .Values.namespaces | quote }}
{{- else }}
- --all-namespaces
{{- end }}
- --selector
- {{ .Values.selector | quote }}
- --logs-dir
- {{ .Values.logs.s3 | quote }}
{{- with .Values.logs.s3Endpoint }}
- --s3-endpoint
- {{ . | quote }}
{{- end }}
- --hold-deadline
- {{ .Values.keeper.holdDeadline | quote }}
- --lease-namespace
- {{ .Release.Namespace | quote }}
{{- end -}}

{{- define "job-sweeper.keeperEnv" -}}
- name: TMPDIR
  value: /scratch
{{- with .Values.logs.region }}
- name: AWS_REGION
  value: {{ . | quote }}
{{- end }}
{{- with .Values.logs.credentialsSecret }}
- name: AWS_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ . | quote }}
      key: AWS_ACCESS_KEY_ID
- name: AWS_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ . | quote }}
      key: AWS_SECRET_ACCESS_KEY
{{- end }}
{{- end -}}

{{/*
The keeper's rights on the Jobs it keeps: a Role and RoleBinding in each of `namespaces`, or with
none a ClusterRole and ClusterRoleBinding (--all-namespaces). Arguments: root, name, and
annotations (the post-delete hook's; may be empty).
*/}}
{{- define "job-sweeper.keeperRbac" -}}
{{- $root := .root }}
{{- $name := .name }}
{{- $annotations := .annotations }}
{{- range $namespace := $root.Values.namespaces }}
---
# Namespace {{ $namespace }}: the Jobs it keeps.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}
  namespace: {{ $namespace }}
  labels:
    {{- include "job-sweeper.labels" $root | nindent 4 }}
  {{- with $annotations }}
  annotations:
    {{- toYaml . | trim | nindent 4 }}
  {{- end }}
rules:
  {{- include "job-sweeper.keeperRules" $root | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}
  namespace: {{ $namespace }}
  labels:
    {{- include "job-sweeper.labels" $root | nindent 4 }}
  {{- with $annotations }}
  annotations:
    {{- toYaml . | trim | nindent 4 }}
  {{- end }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $name }}
subjects:
  - kind: ServiceAccount
    name: {{ $name }}
    namespace: {{ $root.Release.Namespace }}
{{- else }}
---
# Every namespace (no namespaces set): the Jobs it keeps, cluster-wide.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ printf "%s-%s" $root.Release.Namespace $name | trunc 63 | trimSuffix "-" }}
  labels:
    {{- include "job-sweeper.labels" $root | nindent 4 }}
  {{- with $annotations }}
  annotations:
    {{- toYaml . | trim | nindent 4 }}
  {{- end }}
rules:
  {{- include "job-sweeper.keeperRules" $root | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ printf "%s-%s" $root.Release.Namespace $name | trunc 63 | trimSuffix "-" }}
  labels:
    {{- include "job-sweeper.labels" $root | nindent 4 }}
  {{- with $annotations }}
  annotations:
    {{- toYaml . | trim | nindent 4 }}
  {{- end }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ printf "%s-%s" $root.Release.Namespace $name | trunc 63 | trimSuffix "-" }}
subjects:
  - kind: ServiceAccount
    name: {{ $name }}
    namespace: {{ $root.Release.Namespace }}
{{- end }}
{{- end -}}
