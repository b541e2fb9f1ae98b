{{/* On the test cluster's real node: its label, and a toleration of its taint (test/cluster/node.ts). */}}
{{- define "migrate-demo.realNode" -}}
{{- if .Values.realNode -}}
nodeSelector:
  job-sweeper.test/real-node: "true"
tolerations:
  - key: job-sweeper.test/real-node
    operator: Exists
    effect: NoSchedule
{{- end -}}
{{- end -}}
