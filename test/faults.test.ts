// The fault proxy itself, against the real cluster: without rules it is invisible, and each fault
// reaches a real client (@kubernetes/client-node, kubectl, a raw HTTPS client) as intended.
import { readFileSync, statSync } from 'node:fs'
import { request } from 'node:https'
import { join } from 'node:path'
import { ApiException, BatchV1Api, CoreV1Api, Watch } from '@kubernetes/client-node'
import { adminToken, apiServerCertFile } from './cluster/apiserver.ts'
import { batchApi, coreApi, createJob, createNamespace, deleteNamespace, eventually, getJob, jobManifest, testCluster } from './cluster/testenv.ts'
import { useFaultProxy } from './faults/fixture.ts'
import { startFaultProxy, type FaultProxy } from './faults/proxy.ts'
import { networkErrorCode, rejectionOf, runAsync } from './faults/observe.ts'
import { routeOf } from './faults/requests.ts'
import { ApiError, Rest } from '../src/kube/rest.ts'
import { apiErrorMessage, statusCode } from '../src/kube/errors.ts'
import { retryAfterMs } from '../src/kube/retry.ts'

const faults = useFaultProxy()
let ns: string
let proxy: FaultProxy
let viaProxy: { batch: BatchV1Api; core: CoreV1Api }
/** A finished pod with a log, from the pass-through test. */
let logPod: string

beforeAll(async () => {
  ns = await createNamespace('faults')
  proxy = faults.proxy
  const kc = proxy.kubeConfig()
  viaProxy = { batch: kc.makeApiClient(BatchV1Api), core: kc.makeApiClient(CoreV1Api) }
})
afterAll(async () => {
  await deleteNamespace(ns)
})

const jobPath = (name: string): string => `/apis/batch/v1/namespaces/${ns}/jobs/${name}`
const readThroughProxy = (name: string): Promise<unknown> => viaProxy.batch.readNamespacedJob({ name, namespace: ns })
const kubectl = (...args: string[]): ReturnType<typeof runAsync> => runAsync(join(testCluster().binDir, 'kubectl'), args, proxy.env())

/** A raw GET through the proxy: the exact bytes a client received, and how the stream ended. */
function rawGet(path: string, timeoutMs = 10_000): Promise<{ status?: number; headers: Record<string, unknown>; body: Buffer; error?: string }> {
  const cluster = testCluster()
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let status: number | undefined
    let headers: Record<string, unknown> = {}
    const done = (error?: string): void => resolve({ status, headers, body: Buffer.concat(chunks), error })
    const req = request(`${proxy.url}${path}`, {
      ca: readFileSync(apiServerCertFile(cluster.dir)),
      headers: { Authorization: `Bearer ${adminToken(cluster.dir)}` },
      timeout: timeoutMs
    })
    req.on('response', (res) => {
      status = res.statusCode
      headers = res.headers
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => done())
      res.on('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message))
      res.on('aborted', () => done('aborted'))
    })
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })))
    req.on('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message))
    req.end()
  })
}

describe('without faults the proxy passes everything through', () => {
  test('a Job created through the proxy exists in the real API server, and the proxy counted the POST', async () => {
    const created = await viaProxy.batch.createNamespacedJob({ namespace: ns, body: jobManifest({ name: 'via-proxy', namespace: ns }) })
    const direct = await getJob(ns, 'via-proxy')
    expect(direct?.metadata?.uid).toBe(created.metadata?.uid)
    expect(proxy.requests.count({ method: 'POST', path: `/apis/batch/v1/namespaces/${ns}/jobs` })).toBe(1)
    expect(proxy.requests.all.every((r) => r.fault === undefined)).toBe(true)
  })

  test("a pod's log read through the proxy, by client-node and by kubectl, is the log the API server serves", async () => {
    const job = await createJob({ name: 'logs', namespace: ns })
    const pods = await eventually(
      'the pod of Job logs to finish',
      () => coreApi().listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/controller-uid=${job.metadata?.uid}` }),
      (list) => list.items[0]?.status?.phase === 'Succeeded'
    )
    const pod = pods.items[0].metadata?.name ?? ''
    logPod = pod
    const direct = await coreApi().readNamespacedPodLog({ name: pod, namespace: ns })
    expect(direct).toContain('migrate: applying 0042_add_tuples_index')
    expect(await viaProxy.core.readNamespacedPodLog({ name: pod, namespace: ns })).toBe(direct)
    const cli = await kubectl('logs', '-n', ns, pod)
    expect(cli).toMatchObject({ code: 0, stdout: direct })
    expect(proxy.requests.count({ method: 'GET', path: `/api/v1/namespaces/${ns}/pods/${pod}/log` })).toBe(2)
  })

  test('a pod log cut after 40 bytes: the client gets exactly those bytes, and client-node rejects the read', async () => {
    const direct = await coreApi().readNamespacedPodLog({ name: logPod, namespace: ns })
    const logPath = `/api/v1/namespaces/${ns}/pods/${logPod}/log`
    proxy.addRule({ path: logPath, fault: { kind: 'cut', afterBytes: 40 } })
    const got = await rawGet(logPath)
    expect(got.body.toString('utf8')).toBe(direct.slice(0, 40))
    expect(got.error).toBeDefined()
    await expect(viaProxy.core.readNamespacedPodLog({ name: logPod, namespace: ns })).rejects.toThrow()
  })

  test('a watch through the proxy delivers ADDED, MODIFIED and DELETED', async () => {
    const seen: string[] = []
    let ended: unknown = 'not ended'
    const watch = await new Watch(proxy.kubeConfig()).watch(
      `/apis/batch/v1/namespaces/${ns}/jobs`,
      { fieldSelector: 'metadata.name=watched' },
      (type) => seen.push(type),
      (err) => (ended = err)
    )
    await createJob({ name: 'watched', namespace: ns, behaviour: 'hold' })
    await eventually(
      'ADDED',
      async () => seen,
      (s) => s.includes('ADDED')
    )
    await batchApi().patchNamespacedJob({ name: 'watched', namespace: ns, body: [{ op: 'add', path: '/metadata/labels', value: { touched: 'yes' } }] })
    await eventually(
      'MODIFIED',
      async () => seen,
      (s) => s.includes('MODIFIED')
    )
    await batchApi().deleteNamespacedJob({ name: 'watched', namespace: ns, propagationPolicy: 'Background' })
    await eventually(
      'DELETED',
      async () => seen,
      (s) => s.includes('DELETED')
    )
    expect(seen[0]).toBe('ADDED')
    expect(seen.indexOf('MODIFIED')).toBeLessThan(seen.indexOf('DELETED'))
    expect(ended).toBe('not ended') // the stream was still open
    watch.abort()
  })
})

describe('faults reach real clients as such', () => {
  beforeAll(async () => {
    await createJob({ name: 'target', namespace: ns })
  })

  test('429 with Retry-After: client-node gets the 429, its header and a TooManyRequests Status', async () => {
    const rule = proxy.addRule({ method: 'GET', path: jobPath('target'), times: 1, fault: { kind: 'status', code: 429, retryAfterSeconds: 2 } })
    const e = (await rejectionOf(readThroughProxy('target'))) as ApiException<string>
    expect(e).toBeInstanceOf(ApiException)
    expect(e.code).toBe(429)
    expect(e.headers['retry-after']).toBe('2')
    expect(JSON.parse(e.body)).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: 2 } })
    await expect(readThroughProxy('target')).resolves.toMatchObject({ metadata: { name: 'target' } })
    expect(rule.fired).toBe(1)
    expect(proxy.requests.count({ method: 'GET', path: jobPath('target') })).toBe(2)
  })

  test("429 with Retry-After: job-sweeper's own requests (rest.ts) get the 429, its header and the Status, as the retry policy reads them", async () => {
    const rest = new Rest(proxy.kubeConfig())
    try {
      proxy.addRule({ method: 'GET', path: jobPath('target'), times: 1, fault: { kind: 'status', code: 429, retryAfterSeconds: 2 } })
      const e = await rejectionOf(rest.request('GET', jobPath('target')))
      expect(e).toBeInstanceOf(ApiError)
      expect(statusCode(e)).toBe(429)
      expect(retryAfterMs(e)).toBe(2000)
      expect(JSON.parse((e as ApiError).body)).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429 })
      // The positive control: the next request is answered, as plain JSON.
      await expect(rest.request('GET', jobPath('target'))).resolves.toMatchObject({ metadata: { name: 'target', namespace: ns } })
      const missing = await rejectionOf(rest.request('GET', jobPath('no-such-job')))
      expect(statusCode(missing)).toBe(404)
      expect(apiErrorMessage(missing)).toBe('jobs.batch "no-such-job" not found')
    } finally {
      await rest.close()
    }
  })

  test('429 with Retry-After: kubectl (client-go) waits as told and retries, so it succeeds on the second request', async () => {
    proxy.addRule({ method: 'GET', path: jobPath('target'), times: 1, fault: { kind: 'status', code: 429, retryAfterSeconds: 1 } })
    const started = Date.now()
    const result = await kubectl('get', 'job', '-n', ns, 'target', '-o', 'name')
    expect(result).toMatchObject({ code: 0, stdout: 'job.batch/target\n' })
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
    expect(proxy.requests.all.filter((r) => r.path === jobPath('target')).map((r) => r.status)).toEqual([429, 200])
  })

  test.each([500, 503])('%i: client-node gets the code and a Kubernetes Status body', async (code) => {
    proxy.addRule({ path: jobPath('target'), fault: { kind: 'status', code } })
    const e = (await rejectionOf(readThroughProxy('target'))) as ApiException<string>
    expect(e.code).toBe(code)
    expect(JSON.parse(e.body)).toMatchObject({ kind: 'Status', status: 'Failure', code, reason: code === 500 ? 'InternalError' : 'ServiceUnavailable' })
  })

  test('reset before forwarding: the client sees ECONNRESET and the server never got the request', async () => {
    proxy.addRule({ method: 'POST', path: /\/jobs$/, times: 1, fault: { kind: 'reset', when: 'before' } })
    const e = await rejectionOf(viaProxy.batch.createNamespacedJob({ namespace: ns, body: jobManifest({ name: 'reset-before', namespace: ns }) }))
    expect(networkErrorCode(e)).toBe('ECONNRESET')
    expect(await getJob(ns, 'reset-before')).toBeUndefined()
  })

  test('reset after forwarding: the client sees ECONNRESET although the server created the Job', async () => {
    proxy.addRule({ method: 'POST', path: /\/jobs$/, times: 1, fault: { kind: 'reset', when: 'after' } })
    const e = await rejectionOf(viaProxy.batch.createNamespacedJob({ namespace: ns, body: jobManifest({ name: 'reset-after', namespace: ns }) }))
    expect(networkErrorCode(e)).toBe('ECONNRESET')
    expect(await getJob(ns, 'reset-after')).toBeDefined()
  })

  test('a watch stream cut in the middle of its second event: the client gets exactly one event and 20 bytes of the next', async () => {
    await createJob({ name: 'second', namespace: ns })
    proxy.addRule({ path: `/apis/batch/v1/namespaces/${ns}/jobs`, query: { watch: 'true' }, fault: { kind: 'cut', afterEvents: 1, plusBytes: 20 } })
    const got = await rawGet(`/apis/batch/v1/namespaces/${ns}/jobs?watch=true`)
    expect(got.status).toBe(200)
    expect(got.error).toBeDefined() // no clean end of the chunked body
    const text = got.body.toString('utf8')
    const newline = text.indexOf('\n')
    expect(JSON.parse(text.slice(0, newline))).toMatchObject({ type: 'ADDED', object: { kind: 'Job' } })
    expect(text.slice(newline + 1)).toBe('{"type":"ADDED","obj')
  })

  test("a watch stream cut mid-event ends client-node's watch with an error after the complete events", async () => {
    proxy.addRule({ query: { watch: 'true' }, fault: { kind: 'cut', afterEvents: 1 } })
    const seen: string[] = []
    const ended = await new Promise<unknown>((resolve) => {
      void new Watch(proxy.kubeConfig()).watch(`/apis/batch/v1/namespaces/${ns}/jobs`, {}, (type) => seen.push(type), resolve)
    })
    expect(seen).toEqual(['ADDED'])
    expect(ended).toBeInstanceOf(Error)
  })

  test('a cut with how: end ends the response cleanly, the last line truncated', async () => {
    proxy.addRule({ query: { watch: 'true' }, fault: { kind: 'cut', afterEvents: 1, plusBytes: 5, how: 'end' } })
    const got = await rawGet(`/apis/batch/v1/namespaces/${ns}/jobs?watch=true`)
    expect(got.error).toBeUndefined()
    expect(got.body.toString('utf8')).toMatch(/^\{"type":"ADDED".*\}\n\{"typ$/)
  })

  test('a cut after N bytes delivers exactly N bytes of a plain response', async () => {
    proxy.addRule({ path: jobPath('target'), fault: { kind: 'cut', afterBytes: 100 } })
    const got = await rawGet(jobPath('target'))
    expect(got.status).toBe(200)
    expect(got.body.length).toBe(100)
    expect(got.error).toBeDefined()
  })

  test('latency: a delayed request takes at least the delay, and only the matching one is delayed', async () => {
    const timed = async (): Promise<number> => {
      const started = Date.now()
      await readThroughProxy('target')
      return Date.now() - started
    }
    const before = await timed()
    proxy.addRule({ method: 'GET', path: jobPath('target'), times: 1, fault: { kind: 'delay', ms: 1500 } })
    const delayed = await timed()
    const after = await timed()
    expect(delayed).toBeGreaterThanOrEqual(1500)
    expect(before).toBeLessThan(1500)
    expect(after).toBeLessThan(1500)
  })

  test('skip and times: only the 2nd and 3rd matching requests fail', async () => {
    const rule = proxy.addRule({ path: jobPath('target'), skip: 1, times: 2, fault: { kind: 'status', code: 503 } })
    const outcomes: (number | 'ok')[] = []
    for (let i = 0; i < 5; i++) {
      outcomes.push(
        await readThroughProxy('target').then(
          () => 'ok' as const,
          (e: ApiException<string>) => e.code
        )
      )
    }
    expect(outcomes).toEqual(['ok', 503, 503, 'ok', 'ok'])
    expect(rule).toMatchObject({ matched: 5, fired: 2 })
  })

  test('probability: about that share of requests fail, the rule counts exactly the failures, and a seed repeats them', async () => {
    const outcomesWithSeed = async (seed: number): Promise<boolean[]> => {
      const seeded = await startFaultProxy(testCluster(), { seed })
      try {
        const rule = seeded.addRule({ path: jobPath('target'), probability: 0.5, fault: { kind: 'status', code: 500 } })
        const batch = seeded.kubeConfig().makeApiClient(BatchV1Api)
        const failed: boolean[] = []
        for (let i = 0; i < 30; i++)
          failed.push(
            await batch.readNamespacedJob({ name: 'target', namespace: ns }).then(
              () => false,
              () => true
            )
          )
        expect(rule.fired).toBe(failed.filter(Boolean).length)
        return failed
      } finally {
        await seeded.close()
      }
    }
    const first = await outcomesWithSeed(7)
    expect(first.filter(Boolean).length).toBeGreaterThan(3)
    expect(first.filter(Boolean).length).toBeLessThan(27)
    expect(await outcomesWithSeed(7)).toEqual(first)
    expect(await outcomesWithSeed(8)).not.toEqual(first)
  })

  test('request counts by method and path pattern, and by route', async () => {
    for (let i = 0; i < 3; i++) await readThroughProxy('target')
    await viaProxy.batch.listNamespacedJob({ namespace: ns })
    await viaProxy.batch.listNamespacedJob({ namespace: ns, labelSelector: 'a=b' })
    expect(proxy.requests.count()).toBe(5)
    expect(proxy.requests.count({ method: 'GET', path: /\/jobs\/[^/]+$/ })).toBe(3)
    expect(proxy.requests.count({ path: /\/jobs$/ })).toBe(2)
    expect(proxy.requests.count({ path: /\/jobs$/, query: { labelSelector: 'a=b' } })).toBe(1)
    expect(proxy.requests.count({ method: 'DELETE' })).toBe(0)
    expect(proxy.requests.countByRoute()).toEqual([
      ['GET /apis/batch/v1/namespaces/{namespace}/jobs/{name}', 3],
      ['GET /apis/batch/v1/namespaces/{namespace}/jobs', 2]
    ])
  })

  test.each([
    ['GET', '/api/v1/namespaces/ns-1/pods/p-1/log', 'GET /api/v1/namespaces/{namespace}/pods/{name}/log'],
    ['GET', '/api/v1/namespaces/ns-1', 'GET /api/v1/namespaces/{name}'],
    ['LIST', '/apis/batch/v1/jobs', 'LIST /apis/batch/v1/jobs'],
    ['delete', '/apis/coordination.k8s.io/v1/namespaces/a/leases/b', 'DELETE /apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}'],
    ['GET', '/readyz', 'GET /readyz']
  ])('route of %s %s is %s', (method, path, route) => {
    expect(routeOf(method, path)).toBe(route)
  })

  test('waitFor resolves when the n-th matching request arrives, and says how many came when it times out', async () => {
    const twoReads = proxy.requests.waitFor({ method: 'GET', path: jobPath('target') }, 2)
    let resolved = false
    void twoReads.then(() => (resolved = true))
    await readThroughProxy('target')
    await new Promise((r) => setTimeout(r, 50))
    expect(resolved).toBe(false)
    await readThroughProxy('target')
    await twoReads
    await expect(proxy.requests.waitFor({ method: 'DELETE' }, 1, 200)).rejects.toThrow(
      'timed out after 0.2s waiting for 1 requests like DELETE any path; 0 arrived'
    )
  })
})

describe('pause makes the API server unreachable through the proxy', () => {
  test('refuse: ECONNREFUSED, then resume serves again at the same URL', async () => {
    const url = proxy.url
    await proxy.pause('refuse')
    expect(networkErrorCode(await rejectionOf(readThroughProxy('target')))).toBe('ECONNREFUSED')
    await proxy.resume()
    expect(proxy.url).toBe(url)
    await expect(readThroughProxy('target')).resolves.toBeDefined()
  })

  test('reset: ECONNRESET for every new connection', async () => {
    await proxy.pause('reset')
    expect(networkErrorCode(await rejectionOf(readThroughProxy('target')))).toBe('ECONNRESET')
    expect(networkErrorCode(await rejectionOf(readThroughProxy('target')))).toBe('ECONNRESET')
  })

  test('hang: the connection is accepted and never answered, so the client times out', async () => {
    await proxy.pause('hang')
    const started = Date.now()
    expect((await rawGet(jobPath('target'), 1000)).error).toBe('TIMEOUT')
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
    expect(proxy.requests.count()).toBe(0) // TLS never completed: no request was read
  })

  test('unanswered: TLS completes and the request is read, but never answered, so only the answer deadline fires', async () => {
    await proxy.pause('unanswered')
    const started = Date.now()
    expect((await rawGet(jobPath('target'), 1000)).error).toBe('TIMEOUT')
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
    // Unlike hang, the request reached the proxy: the connection and TLS worked.
    expect(proxy.requests.count({ method: 'GET', path: jobPath('target') })).toBe(1)
  })

  test('an open watch is broken by a pause', async () => {
    const seen: string[] = []
    const ended = new Promise<unknown>((resolve) => {
      void new Watch(proxy.kubeConfig()).watch(`/apis/batch/v1/namespaces/${ns}/jobs`, {}, (type) => seen.push(type), resolve)
    })
    await eventually(
      'the initial ADDED events',
      async () => seen,
      (s) => s.length > 0
    )
    await proxy.pause('refuse')
    expect(await ended).toBeInstanceOf(Error)
  })
})

test('the proxy kubeconfig is private (0600), and the proxy serves with the API server certificate', async () => {
  expect(statSync(proxy.kubeconfig).mode & 0o777).toBe(0o600)
  // rawGet verifies TLS against the cluster's CA file; a 200 proves the certificate chain.
  expect((await rawGet('/readyz')).status).toBe(200)
})
