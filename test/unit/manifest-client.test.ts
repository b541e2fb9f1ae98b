// KubeManifestClient over a recording `send`: the release's revisions read from Helm's storage
// Secrets as `helm upgrade` reads them (newest of any status, then the deployed one), and the
// fieldValidation each dry-run write carries (Helm 4's apply: Strict; client-side writes: none).
import { gzipSync } from 'node:zlib'
import type { Call, Send } from '../../src/kube/objects.ts'
import { KubeManifestClient } from '../../src/kube/manifest-client.ts'

interface Sent {
  method: string
  path: string
  query?: Record<string, unknown>
}

/** A storage Secret of Helm's secret driver: base64 (the API's) of base64 (Helm's) of the gzipped release JSON. */
function releaseSecret(version: number, status: string, record: object) {
  const helmBase64 = gzipSync(JSON.stringify({ version, ...record })).toString('base64')
  return {
    metadata: { labels: { owner: 'helm', name: 'app', version: String(version), status } },
    data: { release: Buffer.from(helmBase64).toString('base64') }
  }
}

function client(answer: (s: Sent) => unknown = () => ({})) {
  const sent: Sent[] = []
  const call: Call = (_what, attempt) => attempt(0)
  const send = (async (method: string, path: string, options?: { query?: Record<string, unknown> }) => {
    const s = { method, path, query: options?.query }
    sent.push(s)
    return answer(s)
  }) as Send
  return { kube: new KubeManifestClient(call, send, 'shop'), sent }
}

test('the newest revision is last whatever its status, and the newest deployed one is current; both decoded', async () => {
  const items = [
    releaseSecret(1, 'superseded', { manifest: 'one', apply_method: 'csa' }),
    releaseSecret(2, 'deployed', { manifest: 'two', apply_method: 'csa' }),
    releaseSecret(3, 'pending-upgrade', { manifest: 'three', apply_method: 'ssa' })
  ]
  const { kube, sent } = client(() => ({ items }))
  expect(await kube.releaseHistory('shop', 'app')).toEqual({
    last: { revision: 3, status: 'pending-upgrade', method: 'ssa', manifest: 'three' },
    current: { revision: 2, status: 'deployed', method: 'csa', manifest: 'two' }
  })
  // Every revision, not only deployed ones: the label selector names no status.
  expect(sent[0].query).toEqual({ labelSelector: 'owner=helm,name=app' })
})

test('an uninstalled last revision (kept history) is no release: helm upgrade --install installs', async () => {
  const { kube } = client(() => ({ items: [releaseSecret(1, 'deployed', {}), releaseSecret(2, 'uninstalled', {})] }))
  expect(await kube.releaseHistory('shop', 'app')).toEqual({ absent: true })
})

test('dry-run writes carry the fieldValidation Helm sends: Strict on apply, none on create and patch', async () => {
  const { kube, sent } = client()
  const resource = { apiVersion: 'v1', kind: 'ConfigMap', name: 'configmaps', namespaced: true }
  const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } }
  await kube.dryRunApply(resource, 'shop', object, 'helm', false)
  await kube.dryRunCreate(resource, 'shop', object, 'helm')
  await kube.dryRunPatch(resource, 'shop', 'cm', {}, 'strategic', 'helm')
  expect(sent.map((s) => [s.method, s.query?.dryRun, s.query?.fieldValidation])).toEqual([
    ['PATCH', 'All', 'Strict'],
    ['POST', 'All', undefined],
    ['PATCH', 'All', undefined]
  ])
})

test('a record that does not decode is a refusal that quotes none of it (the record holds the chart’s values)', async () => {
  const corrupt = {
    metadata: { labels: { owner: 'helm', name: 'app', version: '1', status: 'deployed' } },
    data: { release: Buffer.from('password=hunter22').toString('base64') }
  }
  const { kube } = client(() => ({ items: [corrupt] }))
  const history = await kube.releaseHistory('shop', 'app')
  expect(history).toEqual({ refused: { status: 0, body: expect.stringContaining('could not be decoded') } })
  expect(JSON.stringify(history)).not.toContain('hunter22')
})
