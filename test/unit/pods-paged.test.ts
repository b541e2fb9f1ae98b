// A Job's pods are listed in pages (limit/continue), as listJobs lists Jobs: a Job of many pods is
// not one answer held whole. The first page carries the Job's resourceVersion (NotOlderThan); the
// next ones only the continue token (the API server refuses resourceVersionMatch beside it); only
// pods whose controller ownerReference names the Job are kept. The real client, over a loopback stub
// of the API server's pods list.
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { KubeConfig, type V1Pod } from '@kubernetes/client-node'
import { KubeJobsClient } from '../../src/kube/client.ts'

const UID = 'uid-app-migrate'
const PODS = 7
const pod = (name: string, owner = UID): V1Pod => ({
  metadata: {
    name,
    namespace: 'prod',
    labels: { 'batch.kubernetes.io/controller-uid': UID },
    ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'app-migrate', uid: owner, controller: true }]
  }
})
// Six of the Job's pods, and one that only carries its label (planted): 7 in the list, 3 pages of 3.
const listed = [...Array.from({ length: PODS - 1 }, (_, i) => pod(`app-migrate-${i}`)), pod('planted', 'uid-other')]

let server: Server
const queries: URLSearchParams[] = []

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '/', 'http://stub')
    queries.push(url.searchParams)
    const limit = Number(url.searchParams.get('limit') ?? listed.length)
    const from = Number(url.searchParams.get('continue') ?? 0)
    const bad = url.searchParams.get('continue') !== null && (url.searchParams.has('resourceVersion') || url.searchParams.has('resourceVersionMatch'))
    res.setHeader('content-type', 'application/json')
    if (bad) {
      // As the API server answers a continue beside a resourceVersion.
      res.statusCode = 400
      res.end(JSON.stringify({ kind: 'Status', status: 'Failure', code: 400, message: 'resourceVersionMatch is forbidden when continue is provided' }))
      return
    }
    const next = from + limit < listed.length ? String(from + limit) : undefined
    res.end(
      JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '100', continue: next }, items: listed.slice(from, from + limit) })
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
})

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
})

const client = (pageSize: number): KubeJobsClient => {
  const kc = new KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: 'stub', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'stub' }],
    contexts: [{ name: 'stub', cluster: 'stub', user: 'stub' }],
    currentContext: 'stub'
  })
  return new KubeJobsClient(kc, { pageSize })
}

beforeEach(() => {
  queries.length = 0
})

test('a Job of 7 pods, pages of 3: three lists, the version on the first only, the planted pod left out', async () => {
  const pods = await client(3).listPodsOfJob('prod', UID, '42')
  expect(pods.map((p) => p.metadata?.name)).toEqual(Array.from({ length: PODS - 1 }, (_, i) => `app-migrate-${i}`))
  expect(queries.map((q) => Object.fromEntries(q))).toEqual([
    { labelSelector: `batch.kubernetes.io/controller-uid=${UID}`, limit: '3', resourceVersion: '42', resourceVersionMatch: 'NotOlderThan' },
    { labelSelector: `batch.kubernetes.io/controller-uid=${UID}`, limit: '3', continue: '3' },
    { labelSelector: `batch.kubernetes.io/controller-uid=${UID}`, limit: '3', continue: '6' }
  ])
})

test('a Job whose pods fit one page: one list, as before', async () => {
  const pods = await client(500).listPodsOfJob('prod', UID)
  expect(pods).toHaveLength(PODS - 1)
  expect(queries.map((q) => Object.fromEntries(q))).toEqual([{ labelSelector: `batch.kubernetes.io/controller-uid=${UID}`, limit: '500' }])
})
