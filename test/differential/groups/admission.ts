// Writes the API server refuses for what they are, not for a field's history: a
// ValidatingAdmissionPolicy (in-process, no webhook server) that denies a ConfigMap with flag=off
// in the group's namespace, and kinds the cluster does not serve. No admission webhook: the tests
// have no webhook server to run one (test/manifest.test.ts registers an unreachable one inline).
import { eventually } from '../../cluster/testenv.ts'
import { kubectlAsync, kubectlOk, kubectlWith } from '../commands.ts'
import type { Group, GroupEnv } from '../harness.ts'

const configMaps = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-flags
data:
  flag: {{ .Values.flag | quote }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  level: {{ .Values.level | quote }}
{{- with .Values.extraFlag }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $.Release.Name }}-extra-flags
data:
  flag: {{ . | quote }}
{{- end }}
`

const policyName = (env: GroupEnv): string => `diff-flags-${env.ns}`

async function denyFlagOff(env: GroupEnv): Promise<void> {
  const name = policyName(env)
  await kubectlWith('apply', [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }] },
        validations: [{ expression: "!has(object.data) || !('flag' in object.data) || object.data.flag != 'off'", message: 'the flag may not be off' }]
      }
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name },
      spec: { policyName: name, validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': env.ns } } } }
    }
  ])
  // The policy takes effect once the API server has loaded it.
  await eventually(
    'the policy to deny',
    async () => (await kubectlAsync('create', 'configmap', 'probe', '-n', env.ns, '--from-literal=flag=off', '--dry-run=server')).code,
    (code) => code !== 0,
    30_000
  )
}

export const admission: Group = {
  title: 'a ValidatingAdmissionPolicy',
  prefix: 'diff-admit',
  chart: () => ({ templates: { 'configmaps.yaml': configMaps } }),
  releases: [{ name: 'app', values: () => ({ flag: 'on', level: '1', extraFlag: '' }) }],
  setup: denyFlagOff,
  teardown: async (env) => {
    await kubectlOk('delete', 'validatingadmissionpolicybinding,validatingadmissionpolicy', policyName(env), '--ignore-not-found')
  },
  scenarios: [
    {
      name: 'the policy denies the changed ConfigMap',
      values: { flag: 'off' },
      helm: { 3: /app-flags.*the flag may not be off/s, 4: /app-flags.*the flag may not be off/s }
    },
    {
      name: 'the policy denies a new ConfigMap',
      values: { extraFlag: 'off' },
      helm: { 3: /app-extra-flags.*the flag may not be off/s, 4: /app-extra-flags.*the flag may not be off/s }
    },
    { name: 'control: a change the policy allows', values: { level: '2' }, helm: { 3: 'applies', 4: 'applies' } }
  ]
}

const unservedKinds = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  level: {{ .Values.level | quote }}
{{- if .Values.widget }}
---
apiVersion: absent-{{ .Values.runId }}.differential.test/v1
kind: Widget
metadata:
  name: {{ .Release.Name }}-widget
spec:
  size: small
{{- end }}
{{- if .Values.budget }}
---
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: {{ .Release.Name }}-budget
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: web}
{{- end }}
`

export const unserved: Group = {
  title: 'kinds the cluster does not serve',
  prefix: 'diff-kinds',
  chart: () => ({ templates: { 'objects.yaml': unservedKinds } }),
  releases: [{ name: 'app', values: (env) => ({ level: '1', widget: false, budget: false, runId: env.runId }) }],
  scenarios: [
    {
      name: 'a custom resource whose CRD is absent',
      values: { widget: true },
      helm: { 3: /no matches for kind "Widget"/, 4: /no matches for kind "Widget"/ }
    },
    {
      name: 'a PodDisruptionBudget in policy/v1beta1 (removed in Kubernetes 1.25)',
      values: { budget: true },
      helm: {
        3: /no matches for kind "PodDisruptionBudget" in version "policy\/v1beta1"/,
        4: /no matches for kind "PodDisruptionBudget" in version "policy\/v1beta1"/
      }
    }
  ]
}
