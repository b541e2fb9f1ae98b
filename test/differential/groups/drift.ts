// Fields another field manager set (kubectl patch, label, scale, apply --server-side): Helm 4's
// server-side apply without --force-conflicts meets their ownership, Helm 3's three-way patch
// writes over them. Each scenario has a release of its own: the drift stays after a failed upgrade.
import { kubectlOk, kubectlWith } from '../commands.ts'
import { onBoth, type Group } from '../harness.ts'
import { webDeployment } from '../templates.ts'

const templates = {
  'configmap.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  mode: {{ .Values.mode | quote }}
  level: {{ .Values.level | quote }}
`,
  'deployment.yaml': webDeployment({ labels: '    example.com/tier: {{ .Values.tier | quote }}\n', replicas: '{{ .Values.replicas }}' })
}

const base = { mode: 'fast', level: '1', tier: 'silver', replicas: 1 }
const releases = ['patched', 'applied', 'labelled', 'scaled', 'extra', 'shared'].map((name) => ({ name, values: () => base }))

/** A ConfigMap of `release` applied server-side by field manager `x`, with these data. */
const applyAsX = (ns: string, release: string, data: Record<string, string>, ...flags: string[]): Promise<string> =>
  kubectlWith(
    'apply',
    [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${release}-config`, namespace: ns }, data }],
    '--server-side',
    '--field-manager',
    'x',
    ...flags
  )

const conflict = (name: string, kind: string, manager: string): RegExp => new RegExp(`${name}.*${kind}.*conflict with "${manager}"`, 's')

export const drift: Group = {
  title: 'fields another field manager set',
  prefix: 'diff-drift',
  chart: () => ({ templates }),
  releases,
  scenarios: [
    {
      name: 'kubectl patch changed a ConfigMap field the chart sets (the chart changes another)',
      release: 'patched',
      before: async (env) => void (await kubectlOk('patch', 'configmap', 'patched-config', '-n', env.ns, '--type', 'merge', '-p', '{"data":{"mode":"slow"}}')),
      values: { level: '2' },
      helm: { 3: 'applies', 4: conflict('patched-config', 'ConfigMap', 'kubectl-patch') }
    },
    {
      name: 'kubectl apply --server-side --field-manager x took a ConfigMap field the chart changes',
      release: 'applied',
      before: async (env) => void (await applyAsX(env.ns, 'applied', { mode: 'slow' }, '--force-conflicts')),
      values: { mode: 'medium' },
      helm: { 3: 'applies', 4: conflict('applied-config', 'ConfigMap', 'x') }
    },
    {
      name: 'kubectl label changed a Deployment label the chart sets',
      release: 'labelled',
      before: async (env) => void (await kubectlOk('label', 'deployment', 'labelled-web', '-n', env.ns, '--overwrite', 'example.com/tier=gold')),
      values: { level: '2' },
      helm: { 3: 'applies', 4: conflict('labelled-web', 'Deployment', 'kubectl-label') }
    },
    {
      name: "kubectl scale changed a Deployment's replicas the chart sets",
      release: 'scaled',
      before: async (env) => void (await kubectlOk('scale', 'deployment', 'scaled-web', '-n', env.ns, '--replicas', '3')),
      values: { level: '2' },
      helm: { 3: 'applies', 4: conflict('scaled-web', 'Deployment', 'kubectl') }
    },
    {
      name: 'control: kubectl patch added a ConfigMap field the chart does not set',
      release: 'extra',
      before: async (env) => void (await kubectlOk('patch', 'configmap', 'extra-config', '-n', env.ns, '--type', 'merge', '-p', '{"data":{"extra":"1"}}')),
      values: { level: '2' },
      helm: onBoth('applies')
    },
    {
      name: 'control: field manager x applied the value the chart sets (shared ownership)',
      release: 'shared',
      before: async (env) => void (await applyAsX(env.ns, 'shared', { mode: 'fast' })),
      values: { level: '2' },
      helm: onBoth('applies')
    }
  ]
}
