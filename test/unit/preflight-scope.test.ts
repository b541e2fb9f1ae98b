// What the upgrade meets beyond the rendered objects, over a scripted ManifestClient: hooks left
// by an earlier run that their delete policy kept, the CRDs an install creates first from crds/,
// and which failing Jobs pre really clears with its settings (namespace, hooks, managedBy, scope).
import type { KubeObject } from '../../src/kube/manifest-client.ts'
import { checkRelease, type CheckOptions } from '../../src/preflight/check.ts'
import { fakeManifestClient, history, owned } from '../fake/manifest-client.ts'

const options: CheckOptions = { namespace: 'shop', release: 'app', concurrency: 2 }
const immutable = {
  accepted: false as const,
  status: 422,
  body: JSON.stringify({
    message: 'Job.batch "migrate" is invalid: spec.template: Invalid value: field is immutable',
    details: { causes: [{ field: 'spec.template', message: 'Invalid value: field is immutable' }] }
  })
}

function job(
  name: string,
  more: { annotations?: Record<string, string>; namespace?: string; managedBy?: string; failed?: boolean; labels?: Record<string, string> } = {}
): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, ...(more.namespace ? { namespace: more.namespace } : {}), annotations: more.annotations ?? {}, labels: more.labels ?? {} },
    spec: { template: { spec: { containers: [{ name: 'm', image: 'x' }] } }, ...(more.managedBy ? { managedBy: more.managedBy } : {}) },
    ...(more.failed ? { status: { conditions: [{ type: 'Failed', status: 'True' }] } } : {})
  }
}
const hook = (name: string, policy?: string) =>
  job(name, { annotations: { 'helm.sh/hook': 'pre-upgrade', ...(policy ? { 'helm.sh/hook-delete-policy': policy } : {}) } })

describe('hooks an earlier run left', () => {
  test('a failed pre-upgrade hook Job kept by hook-succeeded: Helm 3 (create) meets "already exists"; Helm 4 (apply) waits on a failed Job', async () => {
    const left = hook('seed', 'hook-succeeded')
    const live = { ...left, status: { conditions: [{ type: 'Failed', status: 'True' }] } }
    const csa = fakeManifestClient({ live: [live], history: history({}) })
    const patched = await checkRelease(csa.client, [], { ...options, hooks: [left] })
    expect(patched.verdicts).toMatchObject([
      { kind: 'Job', name: 'seed', hook: ['pre-upgrade'], verdict: { kind: 'exists', message: expect.stringMatching(/^already exists/) } }
    ])
    const ssa = fakeManifestClient({ live: [live], history: history({ method: 'ssa' }) })
    const applied = await checkRelease(ssa.client, [], { ...options, hooks: [left] })
    expect(applied.verdicts).toMatchObject([{ verdict: { kind: 'exists', message: expect.stringContaining('stays failed') } }])
  })

  test('controls: a hook deleted before creation (named, or by default), one of no upgrade event, and one with no namesake are not in the way', async () => {
    const live = [
      hook('named', 'before-hook-creation,hook-succeeded'),
      hook('default'),
      job('install-only', { annotations: { 'helm.sh/hook': 'pre-install', 'helm.sh/hook-delete-policy': 'hook-succeeded' } })
    ]
    const { client, sent } = fakeManifestClient({ live, history: history({}) })
    const rendered = [...live, hook('absent', 'hook-succeeded')]
    const result = await checkRelease(client, [], { ...options, hooks: rendered })
    expect(result.verdicts).toEqual([])
    expect(sent).toEqual([])
  })
})

describe('CRDs from crds/, which an install creates first', () => {
  const crd: KubeObject = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: { group: 'example.com', names: { kind: 'Widget' }, versions: [{ name: 'v1', served: true }] }
  }
  const widget: KubeObject = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }

  test('on an install, a custom resource of a kind its crds/ CRD brings is new, not "not served"; the CRD is dry-run created', async () => {
    const { client } = fakeManifestClient({ notServed: ['example.com/v1 Widget'] })
    const result = await checkRelease(client, [widget], { ...options, crds: [crd] })
    expect(result.verdicts.find((v) => v.name === 'w')?.verdict).toEqual({ kind: 'new', after: 'its CRD widgets.example.com (crds/)' })
    expect(result.verdicts.find((v) => v.kind === 'CustomResourceDefinition')?.verdict.kind).toBe('new')
  })

  test('control: on an upgrade Helm installs no CRD from crds/, so the kind is still not served, and a warning says why', async () => {
    const { client } = fakeManifestClient({ notServed: ['example.com/v1 Widget'], history: history({}) })
    const result = await checkRelease(client, [widget], { ...options, crds: [crd] })
    expect(result.verdicts.find((v) => v.name === 'w')?.verdict.kind).toBe('not-served')
    expect(result.warnings).toEqual([expect.stringContaining("installs no CRD from the chart's crds/ directory")])
  })
})

describe('cleared by pre: only what pre, with the same settings, deletes', () => {
  const run = async (live: KubeObject, rendered: KubeObject, scope: Partial<NonNullable<CheckOptions['preScope']>> = {}) => {
    const { client } = fakeManifestClient({
      live: [live],
      history: history({ manifest: `---\n${JSON.stringify(rendered)}\n` }),
      answers: { [`Job/${rendered.metadata?.name}`]: immutable }
    })
    const result = await checkRelease(client, [rendered], { ...options, preScope: { namespace: 'shop', release: 'app', includeHooks: false, ...scope } })
    return result.verdicts[0]
  }

  test('positive control: the release’s finished Job in pre’s namespace is cleared', async () => {
    expect(await run(owned(job('migrate')), job('migrate'))).toMatchObject({ verdict: { kind: 'immutable' }, clearedByPre: true })
  })

  test.each([
    ['a live hook Job (no include-hooks)', owned(job('migrate', { annotations: { 'helm.sh/hook': 'post-install' } })), job('migrate'), {}, /is a hook/],
    ['an unfinished Job another controller runs', owned(job('migrate', { managedBy: 'kueue.x-k8s.io/multikueue' })), job('migrate'), {}, /spec.managedBy/],
    ['a Job outside the selector', owned(job('migrate', { labels: { tier: 'db' } })), job('migrate'), { selector: 'tier=web' }, /selector/],
    ['a Job rendered in another namespace', owned(job('migrate'), 'app', 'jobs'), job('migrate', { namespace: 'jobs' }), {}, /pre works in shop only/]
  ])('%s is not cleared, and the reason says why', async (_name, live, rendered, scope, why) => {
    const v = await run(live, rendered, scope)
    expect(v).toMatchObject({ verdict: { kind: 'immutable' }, clearedByPre: false, preLeaves: expect.stringMatching(why) })
  })

  test('a finished Job another controller ran is one pre deletes (control for managedBy)', async () => {
    const finished = owned(job('migrate', { managedBy: 'kueue.x-k8s.io/multikueue', failed: true }))
    expect(await run(finished, job('migrate'))).toMatchObject({ clearedByPre: true })
  })
})
