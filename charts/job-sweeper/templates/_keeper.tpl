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
  verbs: [list]
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
- --namespace
- {{ join "," .Values.namespaces | quote }}
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
