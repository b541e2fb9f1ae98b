{{/* The release's full name: the release name, with the chart's name unless it already holds it. */}}
{{- define "job-sweeper.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "job-sweeper.serviceAccountName" -}}
{{- default (include "job-sweeper.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* Cluster-scoped names hold the release's namespace: two releases of one name in two namespaces do not collide. */}}
{{- define "job-sweeper.clusterRoleName" -}}
{{- printf "%s-%s" .Release.Namespace (include "job-sweeper.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The scope, checked once (rbac.yaml renders it in every release): `namespaces` listed, a Role in
each; or `allNamespaces`, a ClusterRole that lists every pod and reads every pod's log in the
cluster, kube-system included. An empty list no longer means every namespace by itself.
*/}}
{{- define "job-sweeper.checkScope" -}}
{{- if and .Values.allNamespaces .Values.namespaces -}}
{{- fail (printf "allNamespaces: true with namespaces %s: expected one of them, the listed namespaces (a Role in each) or every namespace (a ClusterRole)" (toJson .Values.namespaces)) -}}
{{- end -}}
{{- if not (or .Values.allNamespaces .Values.namespaces) -}}
{{- fail "namespaces is empty: expected the namespaces to sweep (and keep), e.g. --set 'namespaces={jobs,batch}', a Role in each; or allNamespaces=true for a ClusterRole that lists every pod and reads every pod's log in the cluster, kube-system included (charts/job-sweeper/README.md#namespaces)" -}}
{{- end -}}
{{- end -}}

{{- define "job-sweeper.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "job-sweeper.image" -}}
{{- if .Values.image.digest -}}
{{- if not (regexMatch "^sha256:[0-9a-f]{64}$" .Values.image.digest) -}}
{{- fail (printf "image.digest '%s': expected sha256:<64 hex digits>" .Values.image.digest) -}}
{{- end -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* What a sweep may do, on every namespace it sweeps (examples/in-cluster/rbac.yaml). */}}
{{- define "job-sweeper.sweepRules" -}}
- apiGroups: [batch]
  resources: [jobs]
  # list, delete; get: read again when a delete meets a changed Job (409). No watch: a sweep
  # deletes finished Jobs in the background and does not wait for them. No update, create; patch
  # only beside a keeper: to let go of its hold on a Job once the sweep saved the logs itself, when
  # no keeper runs to (docs/keeper.md).
  verbs: [get, list, delete{{ if .Values.keeper.enabled }}, patch{{ end }}]
- apiGroups: ['']
  resources: [pods]
  # failed Jobs' pods, to save their logs (a list by the Job's label; no single pod is read)
  verbs: [list]
- apiGroups: ['']
  resources: [pods/log]
  verbs: [get]
- apiGroups: ['']
  resources: [events]
  # a JobSwept Event on every Job it deletes, so kubectl get events explains it
  verbs: [create]
{{- end -}}
