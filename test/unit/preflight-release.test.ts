// The release as `helm upgrade` reads it, over a scripted ManifestClient: a pending revision blocks
// the upgrade; the last revision of any status decides server-side apply; the previous revision's
// kinds must be served; objects new to the release must be its own to be adopted; custom resources
// get Helm's two-way JSON merge patch; the write sends the fieldValidation Helm sends.
import type { KubeObject } from '../../src/kube/manifest-client.ts'
import { checkRelease, type CheckOptions } from '../../src/preflight/check.ts'
import { fakeManifestClient, history, owned } from '../fake/manifest-client.ts'

const options: CheckOptions = { namespace: 'shop', release: 'app', concurrency: 2 }
const configMap = (name: string, data: Record<string, string> = { a: '1' }): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data })
const manifestOf = (...objects: KubeObject[]): string => objects.map((o) => `---\n${JSON.stringify(o)}\n`).join('')
const verdictOf = (r: Awaited<ReturnType<typeof checkRelease>>, name: string) => r.verdicts.find((v) => v.name === name)?.verdict

describe('revisions, read as helm upgrade reads them', () => {
  test.each(['pending-upgrade', 'pending-install', 'pending-rollback'])('the last revision %s: blocked, in Helm’s words', async (status) => {
    const cm = owned(configMap('cm'))
    const { client } = fakeManifestClient({ live: [cm], history: history({ revision: 3, status }, { revision: 2, manifest: manifestOf(cm) }) })
    const result = await checkRelease(client, [configMap('cm')], options)
    expect(result.blocked).toEqual([
      expect.stringMatching(new RegExp(`^another operation \\(install/upgrade/rollback\\) is in progress: revision 3 of app is ${status}`))
    ])
  })

  test('positive control: a last revision that failed is no pending operation, and the deployed one is patched from', async () => {
    const cm = owned(configMap('cm', { a: '1', old: 'x' }))
    const previous = manifestOf(configMap('cm', { a: '1', old: 'x' }))
    const { client, sent } = fakeManifestClient({ live: [cm], history: history({ revision: 3, status: 'failed' }, { revision: 2, manifest: previous }) })
    const result = await checkRelease(client, [configMap('cm')], options)
    expect(result.blocked).toEqual([])
    expect(result.mode.why).toContain("three-way from revision 2's manifest")
    expect(sent).toEqual([expect.objectContaining({ verb: 'patch', body: expect.objectContaining({ data: { old: null } }) })])
  })

  test('Helm 4 follows the last revision’s apply method whatever its status: a failed ssa revision over a deployed csa one applies', async () => {
    const cm = owned(configMap('cm'))
    const { client, sent } = fakeManifestClient({
      live: [cm],
      history: history({ revision: 3, status: 'failed', method: 'ssa' }, { revision: 2, method: 'csa', manifest: manifestOf(cm) })
    })
    const result = await checkRelease(client, [configMap('cm')], options)
    expect(result.mode.write).toBe('apply')
    expect(sent.map((s) => s.verb)).toEqual(['apply'])
  })

  test('no deployed revision and the last superseded or failed: Helm computes from the last; pending-install alone blocks', async () => {
    const cm = owned(configMap('cm'))
    const failedOnly = fakeManifestClient({ live: [cm], history: history({ revision: 1, status: 'failed', manifest: manifestOf(cm) }) })
    expect((await checkRelease(failedOnly.client, [configMap('cm')], options)).blocked).toEqual([])
    const pendingOnly = fakeManifestClient({ live: [cm], history: { last: { revision: 1, status: 'pending-install', method: '', manifest: '' } } })
    expect((await checkRelease(pendingOnly.client, [configMap('cm')], options)).blocked).toHaveLength(1)
  })

  test('the previous revision holds a kind the cluster no longer serves: blocked, naming it; served kinds (control) do not block', async () => {
    const widget: KubeObject = { apiVersion: 'example.com/v1beta1', kind: 'Widget', metadata: { name: 'w' } }
    const cm = owned(configMap('cm'))
    const stale = fakeManifestClient({
      live: [cm],
      history: history({ revision: 4, manifest: manifestOf(cm, widget) }),
      notServed: ['example.com/v1beta1 Widget']
    })
    const result = await checkRelease(stale.client, [configMap('cm')], options)
    expect(result.blocked).toEqual([expect.stringContaining('revision 4 holds Widget in example.com/v1beta1, which the cluster does not serve')])
    const served = fakeManifestClient({ live: [cm], history: history({ revision: 4, manifest: manifestOf(cm, widget) }) })
    expect((await checkRelease(served.client, [configMap('cm')], options)).blocked).toEqual([])
  })
})

describe('ownership, as helm upgrade checks it without --take-ownership', () => {
  const previous = manifestOf(configMap('kept'))

  test('an object new to the release that exists unowned, or owned by another release: not-owned, and no dry run', async () => {
    const unowned = configMap('someone')
    const other = owned(configMap('theirs'), 'other')
    const { client, sent } = fakeManifestClient({ live: [owned(configMap('kept')), unowned, other], history: history({ manifest: previous }) })
    const result = await checkRelease(client, [configMap('kept'), configMap('someone'), configMap('theirs')], options)
    expect(verdictOf(result, 'someone')).toEqual({
      kind: 'not-owned',
      message: expect.stringContaining('missing key "app.kubernetes.io/managed-by": must be set to "Helm"')
    })
    expect(verdictOf(result, 'theirs')).toEqual({ kind: 'not-owned', message: expect.stringContaining('must equal "app": current value is "other"') })
    // The object of the previous revision is not checked for ownership (Helm does not), and is written.
    expect(sent.map((s) => s.name)).toEqual(['kept'])
  })

  test('positive control: one carrying the release’s label and annotations is adopted (written), unowned ones on an install are refused', async () => {
    const adopted = fakeManifestClient({ live: [owned(configMap('adopt'))], history: history({ manifest: previous }) })
    const result = await checkRelease(adopted.client, [configMap('adopt')], options)
    expect(verdictOf(result, 'adopt')?.kind).not.toBe('not-owned')
    const install = fakeManifestClient({ live: [configMap('someone')] })
    expect(verdictOf(await checkRelease(install.client, [configMap('someone')], options), 'someone')?.kind).toBe('not-owned')
  })
})

describe('the write Helm sends', () => {
  const widget = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec })

  test('a custom resource: the JSON merge patch from the previous revision’s object to the rendered one, blind to drift', async () => {
    const live = owned(widget({ size: 1, zone: 'drifted-by-someone', colour: 'red' }))
    const { client, sent } = fakeManifestClient({
      live: [live],
      custom: ['Widget'],
      history: history({ manifest: manifestOf(widget({ size: 1, zone: 'a', colour: 'red' })) })
    })
    await checkRelease(client, [widget({ size: 2, zone: 'a' })], options)
    const merge = sent.find((s) => s.type === 'merge')
    expect(merge?.body).toMatchObject({ spec: { size: 2, colour: null } })
    expect(JSON.stringify(merge?.body)).not.toContain('zone')
  })

  test('a custom resource the chart does not change: no spec in the patch, so drift stays; one whose previous object equals the rendering: no request', async () => {
    const w = widget({ size: 1 })
    const live = owned(widget({ size: 1, zone: 'drifted' }))
    const drifted = fakeManifestClient({ live: [live], custom: ['Widget'], history: history({ manifest: manifestOf(w) }) })
    await checkRelease(drifted.client, [w], options)
    expect(drifted.sent.find((s) => s.type === 'merge')?.body).not.toHaveProperty('spec')
    // A previous object Helm's patch finds nothing to change in (the chart renders Helm's own metadata): Helm sends nothing.
    const same = owned({ ...w, metadata: { ...w.metadata, namespace: 'shop' } })
    const quiet = fakeManifestClient({ live: [live], custom: ['Widget'], history: history({ manifest: manifestOf(same) }) })
    expect(verdictOf(await checkRelease(quiet.client, [same], options), 'w')).toEqual({ kind: 'unchanged' })
    expect(quiet.sent.filter((s) => s.type === 'merge')).toEqual([])
  })

  test('a release applied server-side creates new objects by apply too (Helm 4), a client-side one by create', async () => {
    const ssa = fakeManifestClient({ live: [owned(configMap('old'))], history: history({ method: 'ssa', manifest: manifestOf(configMap('old')) }) })
    await checkRelease(ssa.client, [configMap('old'), configMap('added')], options)
    expect(ssa.sent.map((s) => `${s.verb} ${s.name}`).sort()).toEqual(['apply added', 'apply old'])
    const csa = fakeManifestClient({ live: [owned(configMap('old'))], history: history({ manifest: manifestOf(configMap('old')) }) })
    await checkRelease(csa.client, [configMap('old'), configMap('added')], options)
    expect(csa.sent.map((s) => `${s.verb} ${s.name}`).sort()).toEqual(['create added', 'patch old'])
  })
})
