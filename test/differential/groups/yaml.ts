// What the chart's text means: Helm reads manifests as YAML 1.1 (sigs.k8s.io/yaml), where 0755 is
// octal and yes/on are booleans, each written in the template as a chart author writes it (not
// through --set); and fields the kind does not have (a typo), which Helm 3 validates on the
// client and Helm 4 sends to the API server's field validation.
import { onBoth, reads, type DiffScenario, type Group } from '../harness.ts'
import { webDeployment } from '../templates.ts'

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
  'deployment.yaml': webDeployment({
    podSpec: `      {{- if .Values.automountYes }}
      automountServiceAccountToken: yes
      {{- end }}
`,
    after: `          {{- if .Values.typo }}
          imagePullPolcy: Always
          {{- end }}
${deploymentVolume.mount}
${deploymentVolume.volume}
`
  }),
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

type YamlScenario = DiffScenario & { release: string }

/** A field spelled the YAML 1.1 way, in the chart's text behind `flag`: Helm applies it on both sets, and the live field (of <release>-<object>) reads `value`. */
function readAsYaml11(name: string, release: string, flag: string, live: { kind: string; object: string; path: string; value: string }): YamlScenario {
  return { name, release, values: { [flag]: true }, helm: onBoth('applies'), applied: reads(live.kind, `${release}-${live.object}`, live.path, live.value) }
}

// One release per scenario: a change that applied stays in the chart's text, and would be judged
// again in every later scenario of a shared release.
const scenarios: YamlScenario[] = [
  // 0755 in YAML 1.1 is 493; YAML 1.2 (and JSON) would read 755, more than the 0777 a mode may be.
  readAsYaml11('defaultMode: 0755 (octal) in a Deployment’s ConfigMap volume', 'octal-web', 'octalDeployment', {
    kind: 'deployment',
    object: 'web',
    path: '.spec.template.spec.volumes[0].configMap.defaultMode',
    value: '493'
  }),
  readAsYaml11('defaultMode: 0755 (octal) in a StatefulSet’s ConfigMap volume', 'octal-db', 'octalStatefulSet', {
    kind: 'statefulset',
    object: 'db',
    path: '.spec.template.spec.volumes[0].configMap.defaultMode',
    value: '493'
  }),
  readAsYaml11('automountServiceAccountToken: yes', 'automount', 'automountYes', {
    kind: 'deployment',
    object: 'web',
    path: '.spec.template.spec.automountServiceAccountToken',
    value: 'true'
  }),
  readAsYaml11('enableServiceLinks: on', 'links', 'linksOn', {
    kind: 'statefulset',
    object: 'db',
    path: '.spec.template.spec.enableServiceLinks',
    value: 'true'
  }),
  readAsYaml11('a new ConfigMap with immutable: yes', 'pinned', 'immutableYes', { kind: 'configmap', object: 'pinned', path: '.immutable', value: 'true' }),
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
