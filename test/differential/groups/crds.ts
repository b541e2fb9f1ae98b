// CustomResourceDefinitions and their objects. CRDs are cluster-scoped: each run names its API
// groups after its run id (g<id>.differential.test), so that the suite shares the cluster with
// others, and deletes its CRDs after. A CRD and a CR added in one upgrade; a CRD of the chart that
// changes (control); a CR's change (control); a CR field under a CEL rule `self == oldSelf` that
// someone else changed while the chart did not; a CR of the previous revision in an API version
// the CRD no longer serves; and a first install of a chart with a crds/ directory.
import { eventually } from '../../cluster/testenv.ts'
import { kubectlAsync, kubectlOk, kubectlWith } from '../commands.ts'
import { onBoth, reads, type Group, type GroupEnv } from '../harness.ts'

const apiGroup = (env: GroupEnv, prefix = 'g'): string => `${prefix}${env.runId}.differential.test`

interface Version {
  name: string
  served: boolean
  storage: boolean
}

/** A namespaced CRD whose objects have spec.size (integer) and spec.fixed (string, with these CEL rules). */
function crd(group: string, plural: string, kind: string, opts: { versions?: Version[]; fixedRules?: object[]; description?: string } = {}): object {
  const fixed = { type: 'string', ...(opts.fixedRules ? { 'x-kubernetes-validations': opts.fixedRules } : {}) }
  const schema = {
    openAPIV3Schema: {
      type: 'object',
      ...(opts.description ? { description: opts.description } : {}),
      properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, fixed } } }
    }
  }
  const versions = (opts.versions ?? [{ name: 'v1', served: true, storage: true }]).map((v) => ({ ...v, schema }))
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: { group, scope: 'Namespaced', names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` }, versions }
  }
}

const gated = (value: string, text: string): string => `{{- if .Values.${value} }}\n---\n${text}\n{{- end }}\n`

const cr = (group: string, version: string, kind: string, name: string, spec: string): string => `apiVersion: ${group}/${version}
kind: ${kind}
metadata:
  name: {{ .Release.Name }}-${name}
spec:
${spec}`

const crdsOfTheGroup = (env: GroupEnv): string[] => ['parts', 'tools', 'gadgets', 'olds'].map((p) => `${p}.${apiGroup(env)}`)

async function established(names: string[]): Promise<void> {
  await kubectlOk('wait', '--for=condition=Established', '--timeout=60s', ...names.map((n) => `crd/${n}`))
}

function templates(env: GroupEnv): Record<string, string> {
  const g = apiGroup(env)
  // The tools CRD's description comes from the values: a change to a CRD the chart owns.
  const tools = JSON.stringify(crd(g, 'tools', 'Tool', { description: 'DESCRIPTION' })).replace('"DESCRIPTION"', '{{ .Values.toolsDescription | quote }}')
  return {
    'configmap.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-base\ndata:\n  level: "1"\n',
    'parts.yaml': gated('partsCrd', JSON.stringify(crd(g, 'parts', 'Part'))) + gated('part', cr(g, 'v1', 'Part', 'part', '  size: 1')),
    'tools.yaml': gated('toolsCrd', tools),
    'gadget.yaml': gated('gadget', cr(g, 'v1', 'Gadget', 'gadget', '  size: {{ .Values.size }}\n  fixed: {{ .Values.fixed | quote }}')),
    'old.yaml': gated('old', cr(g, '{{ .Values.oldVersion }}', 'Old', 'old', '  size: 1'))
  }
}

const none = { partsCrd: false, part: false, toolsCrd: false, toolsDescription: 'v1', gadget: false, size: 1, fixed: 'a', old: false, oldVersion: 'v1beta1' }

export const crds: Group = {
  title: 'CRDs and custom resources',
  prefix: 'diff-crds',
  chart: (env) => ({ templates: templates(env) }),
  releases: [
    { name: 'adds', values: () => none },
    { name: 'tooling', values: () => ({ ...none, toolsCrd: true }) },
    { name: 'gadget', values: () => ({ ...none, gadget: true }) },
    { name: 'locked', values: () => ({ ...none, gadget: true }) },
    { name: 'legacy', values: () => ({ ...none, old: true }) }
  ],
  setup: async (env) => {
    const g = apiGroup(env)
    const both = [
      { name: 'v1beta1', served: true, storage: false },
      { name: 'v1', served: true, storage: true }
    ]
    await kubectlWith('apply', [crd(g, 'gadgets', 'Gadget'), crd(g, 'olds', 'Old', { versions: both })])
    await established([`gadgets.${g}`, `olds.${g}`])
  },
  teardown: async (env) => {
    await kubectlOk('delete', 'crd', '--ignore-not-found', '--wait=false', ...crdsOfTheGroup(env))
  },
  scenarios: [
    {
      name: 'an upgrade adds a CRD to templates/ and a custom resource of it',
      release: 'adds',
      values: { partsCrd: true, part: true },
      helm: onBoth(/no matches for kind "Part"/)
    },
    {
      name: 'control: a CRD of the chart changes (its schema description)',
      release: 'tooling',
      values: { toolsDescription: 'v2' },
      helm: onBoth('applies')
    },
    { name: "control: a custom resource's field", release: 'gadget', values: { size: 2 }, helm: onBoth('applies') },
    {
      name: 'a field under the CEL rule self == oldSelf that someone else changed, which the chart does not change',
      release: 'locked',
      before: async (env) => {
        const g = apiGroup(env)
        await kubectlOk('patch', `gadgets.${g}`, 'locked-gadget', '-n', env.ns, '--type', 'merge', '-p', '{"spec":{"fixed":"b"}}')
        await kubectlWith('apply', [crd(g, 'gadgets', 'Gadget', { fixedRules: [{ rule: 'self == oldSelf', message: 'fixed may not change' }] })])
        await eventually(
          'the CEL rule to be enforced',
          async () =>
            (await kubectlAsync('patch', `gadgets.${g}`, 'locked-gadget', '-n', env.ns, '--type', 'merge', '-p', '{"spec":{"fixed":"c"}}', '--dry-run=server'))
              .code,
          (code) => code !== 0,
          30_000
        )
      },
      values: { size: 2 },
      helm: { 3: 'applies', 4: /locked-gadget.*conflict with "kubectl-patch"/s }
    },
    {
      name: "the previous revision's custom resource is in an API version the CRD no longer serves (the chart moves to v1)",
      release: 'legacy',
      before: async (env) => {
        const g = apiGroup(env)
        await kubectlOk('patch', 'crd', `olds.${g}`, '--type', 'json', '-p', '[{"op":"replace","path":"/spec/versions/0/served","value":false}]')
        await eventually(
          'v1beta1 to be no longer served',
          async () => (await kubectlAsync('get', `olds.v1beta1.${g}`, '-n', env.ns)).code,
          (code) => code !== 0,
          30_000
        )
      },
      values: { oldVersion: 'v1' },
      helm: onBoth(/current release manifest/)
    }
  ]
}

const thingCrdName = (env: GroupEnv): string => `things.${apiGroup(env, 't')}`

export const crdsDirectory: Group = {
  title: 'a first install of a chart with a crds/ directory',
  prefix: 'diff-crddir',
  chart: (env) => ({
    crds: { 'things.yaml': JSON.stringify(crd(apiGroup(env, 't'), 'things', 'Thing')) },
    templates: { 'thing.yaml': cr(apiGroup(env, 't'), 'v1', 'Thing', 'thing', '  size: {{ .Values.size }}\n') }
  }),
  releases: [{ name: 'fresh', values: () => ({ size: 1 }), install: false }],
  teardown: async (env) => {
    await kubectlOk('delete', 'crd', '--ignore-not-found', '--wait=false', thingCrdName(env))
  },
  scenarios: [
    {
      name: 'helm template --include-crds, then helm upgrade --install',
      firstInstall: true,
      helm: onBoth('applies'),
      applied: (env, release) => reads(thingCrdName(env), 'fresh-thing', '.spec.size', '1')(env, release)
    }
  ]
}
