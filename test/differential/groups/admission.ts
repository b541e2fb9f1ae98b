// Writes the API server refuses for what they are, not for a field's history: a
// ValidatingAdmissionPolicy (in-process, no webhook server) that denies a ConfigMap with flag=off
// in the group's namespace, and kinds the cluster does not serve. No admission webhook: the tests
// have no webhook server to run one (test/manifest.test.ts registers an unreachable one inline).
import { eventually } from '../../cluster/testenv.ts'
import { denyFlagOffPolicy } from '../../flag-policy.ts'
import { kubectlAsync, kubectlOk, kubectlWith } from '../commands.ts'
import { onBoth, type Group, type GroupEnv } from '../harness.ts'
import { settingsConfigMap } from '../templates.ts'

const configMaps = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-flags
data:
  flag: {{ .Values.flag | quote }}
---
${settingsConfigMap}{{- with .Values.extraFlag }}
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
  await kubectlWith('apply', denyFlagOffPolicy(name, env.ns))
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
      helm: onBoth(/app-flags.*the flag may not be off/s)
    },
    {
      name: 'the policy denies a new ConfigMap',
      values: { extraFlag: 'off' },
      helm: onBoth(/app-extra-flags.*the flag may not be off/s)
    },
    { name: 'control: a change the policy allows', values: { level: '2' }, helm: onBoth('applies') }
  ]
}

const unservedKinds = `${settingsConfigMap}{{- if .Values.widget }}
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
      helm: onBoth(/no matches for kind "Widget"/)
    },
    {
      name: 'a PodDisruptionBudget in policy/v1beta1 (removed in Kubernetes 1.25)',
      values: { budget: true },
      helm: onBoth(/no matches for kind "PodDisruptionBudget" in version "policy\/v1beta1"/)
    }
  ]
}
