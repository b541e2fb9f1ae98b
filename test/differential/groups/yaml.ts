// What the chart's text means: Helm reads manifests as YAML 1.1 (sigs.k8s.io/yaml), where 0755 is
// octal and yes/on are booleans, each written in the template as a chart author writes it (not
// through --set); and fields the kind does not have (a typo), which Helm 3 validates on the
// client and Helm 4 sends to the API server's field validation.
import type { Group } from '../harness.ts'

const scriptsVolume = (flag: string): { mount: string; volume: string } => ({
  mount: `          {{- if .Values.${flag} }}
          volumeMounts:
            - name: scripts
              mountPath: /scripts
          {{- end }}`,
  volume: `      {{- if .Values.${flag} }}
      volumes:
        - name: scripts
          configMap:
            name: {{ .Release.Name }}-scripts
            defaultMode: 0755
      {{- end }}`
})

const deploymentVolume = scriptsVolume('octalDeployment')
const statefulSetVolume = scriptsVolume('octalStatefulSet')

const templates = {
  'configmap.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-scripts
data:
  run.sh: "echo {{ .Values.level }}"
{{- if .Values.immutableYes }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-pinned
immutable: yes
data:
  level: "1"
{{- end }}
{{- if .Values.typoNew }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-typo
dta:
  level: "1"
{{- end }}
`,
  'deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
spec:
  replicas: 1
  selector:
    matchLabels: {app: {{ .Release.Name }}-web}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}-web}
    spec:
      {{- if .Values.automountYes }}
      automountServiceAccountToken: yes
      {{- end }}
      containers:
        - name: web
          image: example.invalid/web:1
          {{- if .Values.typo }}
          imagePullPolcy: Always
          {{- end }}
${deploymentVolume.mount}
${deploymentVolume.volume}
`,
  'statefulset.yaml': `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Release.Name }}-db
spec:
  serviceName: {{ .Release.Name }}-db
  replicas: 1
  selector:
    matchLabels: {app: {{ .Release.Name }}-db}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}-db}
    spec:
      {{- if .Values.linksOn }}
      enableServiceLinks: on
      {{- end }}
      containers:
        - name: db
          image: example.invalid/db:1
${statefulSetVolume.mount}
${statefulSetVolume.volume}
`
}

const base = {
  level: '1',
  octalDeployment: false,
  octalStatefulSet: false,
  automountYes: false,
  linksOn: false,
  immutableYes: false,
  typo: false,
  typoNew: false
}

export const yaml: Group = {
  title: 'YAML 1.1 and unknown fields',
  prefix: 'diff-yaml',
  chart: () => ({ templates }),
  releases: [{ name: 'app', values: () => base }],
  scenarios: [
    { name: 'defaultMode: 0755 (octal) in a Deployment’s ConfigMap volume', values: { octalDeployment: true }, helm: { 3: 'applies', 4: 'applies' } },
    { name: 'defaultMode: 0755 (octal) in a StatefulSet’s ConfigMap volume', values: { octalStatefulSet: true }, helm: { 3: 'applies', 4: 'applies' } },
    { name: 'automountServiceAccountToken: yes', values: { automountYes: true }, helm: { 3: 'applies', 4: 'applies' } },
    { name: 'enableServiceLinks: on', values: { linksOn: true }, helm: { 3: 'applies', 4: 'applies' } },
    { name: 'a new ConfigMap with immutable: yes', values: { immutableYes: true }, helm: { 3: 'applies', 4: 'applies' } },
    { name: 'a typo’d field in a Deployment’s container (imagePullPolcy)', values: { typo: true }, helm: { 3: /imagePullPolcy/, 4: /imagePullPolcy/ } },
    { name: 'a typo’d field in a new ConfigMap (dta)', values: { typoNew: true }, helm: { 3: /dta/, 4: /dta/ } }
  ]
}
