// What the chart's text means: Helm reads manifests as YAML 1.1 (sigs.k8s.io/yaml), where 0755 is
// octal and yes/on are booleans, each written in the template as a chart author writes it (not
// through --set); and fields the kind does not have (a typo), which Helm 3 validates on the
// client and Helm 4 sends to the API server's field validation.
import { reads, type DiffScenario, type Group } from '../harness.ts'

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

// One release per scenario: a change that applied stays in the chart's text, and would be judged
// again in every later scenario of a shared release.
const scenarios: (DiffScenario & { release: string })[] = [
  // 0755 in YAML 1.1 is 493; YAML 1.2 (and JSON) would read 755, more than the 0777 a mode may be.
  {
    name: 'defaultMode: 0755 (octal) in a Deployment’s ConfigMap volume',
    release: 'octal-web',
    values: { octalDeployment: true },
    helm: { 3: 'applies', 4: 'applies' },
    applied: reads('deployment', 'octal-web-web', '.spec.template.spec.volumes[0].configMap.defaultMode', '493')
  },
  {
    name: 'defaultMode: 0755 (octal) in a StatefulSet’s ConfigMap volume',
    release: 'octal-db',
    values: { octalStatefulSet: true },
    helm: { 3: 'applies', 4: 'applies' },
    applied: reads('statefulset', 'octal-db-db', '.spec.template.spec.volumes[0].configMap.defaultMode', '493')
  },
  {
    name: 'automountServiceAccountToken: yes',
    release: 'automount',
    values: { automountYes: true },
    helm: { 3: 'applies', 4: 'applies' },
    applied: reads('deployment', 'automount-web', '.spec.template.spec.automountServiceAccountToken', 'true')
  },
  {
    name: 'enableServiceLinks: on',
    release: 'links',
    values: { linksOn: true },
    helm: { 3: 'applies', 4: 'applies' },
    applied: reads('statefulset', 'links-db', '.spec.template.spec.enableServiceLinks', 'true')
  },
  {
    name: 'a new ConfigMap with immutable: yes',
    release: 'pinned',
    values: { immutableYes: true },
    helm: { 3: 'applies', 4: 'applies' },
    applied: reads('configmap', 'pinned-pinned', '.immutable', 'true')
  },
  // Helm 3 sends the patch with the API server's default field validation (Warn): the field is
  // dropped, and klog prints the warning, quoted (\"dta\").
  {
    name: 'a typo’d field in a Deployment’s container (imagePullPolcy)',
    release: 'typo',
    values: { typo: true },
    helm: {
      3: { warns: /Warning: unknown field \\"spec\.template\.spec\.containers\[0\]\.imagePullPolcy\\"/ },
      4: /typo-web.*imagePullPolcy: field not declared in schema/s
    }
  },
  {
    name: 'a typo’d field in a new ConfigMap (dta)',
    release: 'typo-new',
    values: { typoNew: true },
    helm: { 3: { warns: /Warning: unknown field \\"dta\\"/ }, 4: /typo-new-typo.*\.dta: field not declared in schema/s }
  }
]

export const yaml: Group = {
  title: 'YAML 1.1 and unknown fields',
  prefix: 'diff-yaml',
  chart: () => ({ templates }),
  releases: scenarios.map((s) => ({ name: s.release, values: () => base })),
  scenarios
}
