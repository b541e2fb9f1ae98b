// recreate-statefulsets' branches over a scripted ManifestClient (the cluster test shows the happy
// path on a real API server): a delete whose preconditions no longer hold is re-decided on the
// fresh object; a StatefulSet that is not the release's, or whose verdict changed, is not deleted;
// a dry run deletes nothing; one that is not gone in time is an error.
import type { ApiResource, KubeObject, ManifestClient, ReadAnswer, ReleaseHistory, WriteAnswer } from '../../src/kube/manifest-client.ts'
import type { DeleteResult, Precondition } from '../../src/kube/objects.ts'
import { recreateStatefulSets } from '../../src/preflight/remedy.ts'
import type { ObjectVerdict } from '../../src/preflight/verdict.ts'
import type { Settings } from '../../src/settings/settings.ts'

const RESOURCE: ApiResource = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'statefulsets', namespaced: true }
const HELM = { 'meta.helm.sh/release-name': 'app', 'meta.helm.sh/release-namespace': 'shop' }

const statefulSet = (storage: string, resourceVersion = '1', annotations: Record<string, string> = HELM): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'db', namespace: 'shop', uid: 'uid-1', resourceVersion, annotations },
  spec: { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage } } } }] }
})
const rendered = statefulSet('2Gi')
const IMMUTABLE = JSON.stringify({
  kind: 'Status',
  code: 422,
  message: 'StatefulSet.apps "db" is invalid: spec.volumeClaimTemplates: field is immutable',
  details: { causes: [{ reason: 'FieldValueInvalid', field: 'spec.volumeClaimTemplates', message: 'Invalid value: …: field is immutable' }] }
})

/** Answers in order (the last one repeats); records the deletes. */
class ScriptedClient implements ManifestClient {
  readonly defaultNamespace = 'shop'
  readonly deletes: Precondition[] = []
  private readonly reads: ReadAnswer[]
  private readonly deleteAnswers: DeleteResult[]
  private readonly dryRun: WriteAnswer
  constructor(reads: ReadAnswer[], deleteAnswers: DeleteResult[] = ['deleted'], dryRun: WriteAnswer = { accepted: false, status: 422, body: IMMUTABLE }) {
    this.reads = reads
    this.deleteAnswers = deleteAnswers
    this.dryRun = dryRun
  }
  async resourceFor(): Promise<ApiResource> {
    return RESOURCE
  }
  async read(): Promise<ReadAnswer> {
    return this.reads.length > 1 ? this.reads.shift()! : this.reads[0]
  }
  async listNamed(): Promise<{ found: Map<string, KubeObject> }> {
    throw new Error('no list expected')
  }
  async releaseHistory(): Promise<ReleaseHistory> {
    // The deployed revision holds the StatefulSet: it is the release's own, not new to it.
    const revision = { revision: 1, status: 'deployed', method: 'ssa' as const, manifest: 'apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\n' }
    return { last: revision, current: revision }
  }
  async openApi(): Promise<undefined> {
    return undefined
  }
  async dryRunCreate(): Promise<WriteAnswer> {
    throw new Error('no create expected')
  }
  async dryRunApply(): Promise<WriteAnswer> {
    return this.dryRun
  }
  async dryRunPatch(): Promise<WriteAnswer> {
    throw new Error('no patch expected')
  }
  async deleteOrphaning(_r: ApiResource, _ns: string | undefined, _name: string, precondition: Precondition): Promise<DeleteResult> {
    this.deletes.push(precondition)
    return this.deleteAnswers.length > 1 ? this.deleteAnswers.shift()! : this.deleteAnswers[0]
  }
}

const target: ObjectVerdict = {
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  namespace: 'shop',
  name: 'db',
  write: 'apply',
  verdict: { kind: 'immutable', fields: ['spec.volumeClaimTemplates[data].spec.resources.requests.storage: 1Gi → 2Gi'], message: '' },
  clearedByPre: true
}
const settings = (more: Partial<Settings> = {}): Settings =>
  ({ scope: { release: 'app' }, dryRun: false, waitTimeoutSeconds: 1, manifestObjects: { objects: [rendered], hooks: [] }, ...more }) as Settings
const found = (o: KubeObject): ReadAnswer => ({ found: o })
const run = (client: ManifestClient, more: Partial<Settings> = {}) => recreateStatefulSets(client, [target], settings(more), { info: () => undefined })

test('a delete whose resourceVersion no longer holds (a status update) is checked and read again, then deleted; done once it is gone', async () => {
  // check, read (rv 1) → conflict; check, read (rv 2) → deleted; then read until absent.
  const client = new ScriptedClient(
    [
      found(statefulSet('1Gi')),
      found(statefulSet('1Gi')),
      found(statefulSet('1Gi', '2')),
      found(statefulSet('1Gi', '2')),
      found(statefulSet('1Gi', '2')),
      { absent: true }
    ],
    ['conflict', 'deleted']
  )
  const result = await run(client)
  expect(client.deletes).toEqual([
    { uid: 'uid-1', resourceVersion: '1' },
    { uid: 'uid-1', resourceVersion: '2' }
  ])
  expect(result.errors).toEqual([])
  expect(result.done).toEqual([
    expect.stringMatching(/^StatefulSet shop\/db deleted with propagationPolicy Orphan \(recreate-statefulsets\): its pods and PVCs stay/)
  ])
})

test('a StatefulSet without Helm release annotations, or of another release, is not deleted', async () => {
  for (const annotations of [{}, { ...HELM, 'meta.helm.sh/release-name': 'other' }]) {
    const client = new ScriptedClient([found(statefulSet('1Gi', '1', annotations))])
    const result = await run(client)
    expect(client.deletes).toEqual([])
    expect(result.errors).toEqual([
      expect.stringMatching(
        /^recreate-statefulsets: StatefulSet shop\/db not deleted: (it has no meta\.helm\.sh\/release-name|it belongs to release other, not app)/
      )
    ])
  }
})

test('a verdict that changed since the preflight is acted on: the upgrade can write it now, so it is not deleted', async () => {
  const client = new ScriptedClient([found(statefulSet('1Gi'))], ['deleted'], { accepted: true, object: statefulSet('1Gi') })
  const result = await run(client)
  expect(client.deletes).toEqual([])
  expect(result).toEqual({ done: ['StatefulSet shop/db not deleted: the upgrade can write it now (unchanged)'], errors: [] })
})

test('a dry run deletes nothing and says what it would do', async () => {
  const client = new ScriptedClient([found(statefulSet('1Gi'))])
  const result = await run(client, { dryRun: true })
  expect(client.deletes).toEqual([])
  expect(result.done).toEqual(['StatefulSet shop/db would be deleted with propagationPolicy Orphan (dry run: nothing was changed)'])
})

test('deleted but still there after wait-timeout: an error that says so', async () => {
  const client = new ScriptedClient([found(statefulSet('1Gi'))])
  const result = await run(client)
  expect(client.deletes).toHaveLength(1)
  expect(result.errors).toEqual(['recreate-statefulsets: StatefulSet shop/db was deleted with propagationPolicy Orphan but is not gone after 1s'])
})

test('a run cancelled before the delete (SIGINT during the checks) deletes nothing, and says why; the same run uncancelled deletes (control)', async () => {
  const cancelled = new AbortController()
  cancelled.abort()
  const client = new ScriptedClient([found(statefulSet('1Gi'))], ['deleted'])
  const result = await recreateStatefulSets(client, [target], settings(), { info: () => undefined, signal: cancelled.signal })
  expect(client.deletes).toEqual([])
  expect(result.errors).toEqual([expect.stringMatching(/StatefulSet shop\/db not deleted: the run was cancelled, and no upgrade would recreate it$/)])
  const control = new ScriptedClient([found(statefulSet('1Gi')), found(statefulSet('1Gi')), { absent: true }], ['deleted'])
  await recreateStatefulSets(control, [target], settings(), { info: () => undefined, signal: new AbortController().signal })
  expect(control.deletes).toHaveLength(1)
})
