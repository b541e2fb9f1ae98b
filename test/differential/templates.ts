// Chart text that several groups' charts hold alike: the settings ConfigMap a control changes, and
// the web Deployment (no Deployment controller runs here: it never becomes ready) that a group
// adds its own lines to.

/** ConfigMap <release>-settings with data.level from the values: a change any upgrade can make. */
export const settingsConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  level: {{ .Values.level | quote }}
`

/** Where a group adds lines to the web Deployment, each text whole lines ending in a newline, indented for its place. */
export interface WebDeploymentLines {
  /** Under metadata.labels (none: no labels). */
  labels?: string
  /** spec.replicas (default 1). */
  replicas?: string
  /** In the pod spec, before containers. */
  podSpec?: string
  /** After the web container's image: more of its fields, then more of the pod spec. */
  after?: string
}

/** Deployment <release>-web: one container, web, of example.invalid/web:1, selected by app: <release>-web. */
export const webDeployment = (lines: WebDeploymentLines = {}): string => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
${lines.labels ? `  labels:\n${lines.labels}` : ''}spec:
  replicas: ${lines.replicas ?? '1'}
  selector:
    matchLabels: {app: {{ .Release.Name }}-web}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}-web}
    spec:
${lines.podSpec ?? ''}      containers:
        - name: web
          image: example.invalid/web:1
${lines.after ?? ''}`
