// How checkRelease reads the live objects, over a scripted ManifestClient: many objects of a kind
// in a namespace by one list, a few by a GET each, and a refused list by GETs; and which original
// Helm 3's patch is computed from.
import type { ApiResource, KubeObject, ManifestClient, ReadAnswer, Refusal } from '../../src/kube/manifest-client.ts'
import { checkRelease } from '../../src/preflight/check.ts'

const configMap = (name: string, data: Record<string, string> = { a: '1' }): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data })

function fakeClient(live: KubeObject[], options: { listRefused?: Refusal; record?: { manifest: string } } = {}) {
  const calls = { list: 0, get: 0, patches: [] as object[] }
  const byName = new Map(live.map((o) => [o.metadata?.name, { ...o, metadata: { ...o.metadata, namespace: 'ns' } }]))
  const client: ManifestClient = {
    defaultNamespace: 'ns',
    resourceFor: async (apiVersion, kind) => ({ apiVersion, kind, name: `${kind.toLowerCase()}s`, namespaced: true }),
    read: async (_r: ApiResource, _ns, name): Promise<ReadAnswer> => {
      calls.get++
      const found = byName.get(name)
      return found ? { found } : { absent: true }
    },
    listNamed: async (_r, _ns, names) => {
      calls.list++
      if (options.listRefused) return { refused: options.listRefused }
      return { found: new Map([...byName].filter(([n]) => names.has(n ?? '')).map(([n, o]) => [n ?? '', o])) }
    },
    // No record given: the credentials may not read it (a two-way patch), rather than no release (an install).
    releaseHistory: async () => {
      if (!options.record) return { refused: { status: 403, body: 'secrets is forbidden' } }
      const revision = { revision: 1, status: 'deployed', method: '' as const, ...options.record }
      return { last: revision, current: revision }
    },
    openApi: async () => undefined,
    deleteOrphaning: async () => {
      throw new Error('no delete expected')
    },
    dryRunCreate: async (_r, _ns, object) => ({ accepted: true, object }),
    dryRunApply: async (_r, _ns, object) => ({ accepted: true, object }),
    dryRunPatch: async (_r, _ns, name, patch) => {
      calls.patches.push(patch)
      return { accepted: true, object: byName.get(name) ?? {} }
    }
  }
  return { client, calls }
}

const many = Array.from({ length: 12 }, (_, i) => configMap(`cm-${i}`))

test('12 ConfigMaps, 10 of them live: one list reads them all, the 2 missing are new', async () => {
  const { client, calls } = fakeClient(many.slice(0, 10))
  const result = await checkRelease(client, many, { namespace: 'ns', release: 'app', concurrency: 4 })
  expect(calls).toMatchObject({ list: 1, get: 0 })
  expect(result.verdicts.filter((v) => v.verdict.kind === 'new').map((v) => v.name)).toEqual(['cm-10', 'cm-11'])
})

test('a refused list (a Role with get alone): a GET each, the same verdicts', async () => {
  const { client, calls } = fakeClient(many.slice(0, 10), { listRefused: { status: 403, body: 'configmaps is forbidden: cannot list resource' } })
  const result = await checkRelease(client, many, { namespace: 'ns', release: 'app', concurrency: 4 })
  expect(calls).toMatchObject({ list: 1, get: 12 })
  expect(result.verdicts.filter((v) => v.verdict.kind === 'new').map((v) => v.name)).toEqual(['cm-10', 'cm-11'])
})

test('a few objects of a kind: a GET each, no list', async () => {
  const { client, calls } = fakeClient(many.slice(0, 2))
  await checkRelease(client, many.slice(0, 3), { namespace: 'ns', release: 'app', concurrency: 4 })
  expect(calls).toMatchObject({ list: 0, get: 3 })
})

test("Helm 3: the patch removes what the previous revision's manifest set and the rendering drops; without the record, nothing", async () => {
  const previous = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: "1", old: "x"}\n'
  const rendered = [configMap('cm')]
  const withRecord = fakeClient([configMap('cm', { a: '1', old: 'x' })], { record: { manifest: previous } })
  const checked = await checkRelease(withRecord.client, rendered, { namespace: 'ns', release: 'app', concurrency: 1 })
  expect(checked.mode.why).toContain("three-way from revision 1's manifest")
  // What the live object already has (a: "1") is not sent: Helm's patch is the delta from it.
  expect(withRecord.calls.patches).toEqual([expect.objectContaining({ data: { old: null } })])

  const without = fakeClient([configMap('cm', { a: '1', old: 'x' })])
  await checkRelease(without.client, rendered, { namespace: 'ns', release: 'app', concurrency: 1 })
  expect(without.calls.patches).toEqual([expect.not.objectContaining({ data: expect.anything() })])
})
