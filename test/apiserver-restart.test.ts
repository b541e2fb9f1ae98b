/** @cluster whole: it kills and restarts kube-apiserver and the controllers, which every other suite needs */
// kube-apiserver killed and started again mid-run, as fault tests do it: clients fail while it is
// down and succeed after it at the same URL, with the same certificate; etcd keeps every object,
// and the controllers and kwok reconnect by themselves.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { BatchV1Api } from '@kubernetes/client-node'
import { apiServerCertFile, apiServerPid, killApiServer, restartApiServer, startApiServerAgain } from './cluster/apiserver.ts'
import { isAlive } from './cluster/processes.ts'
import { batchApi, createJob, createNamespace, deleteNamespace, eventually, getJob, jobCondition, testCluster, waitForJobCondition } from './cluster/testenv.ts'
import { restartControllers } from './cluster/controllers.ts'
import { networkErrorCode, rejectionOf, runAsync } from './faults/observe.ts'
import { startFaultProxy } from './faults/proxy.ts'

let ns: string

beforeAll(async () => {
  ns = await createNamespace('restart')
})
// A failed test must not leave the cluster without its API server for the tests after it.
afterEach(async () => {
  const pid = apiServerPid(testCluster().dir)
  if (!pid || !isAlive(pid)) await startApiServerAgain(testCluster())
})
afterAll(async () => {
  await deleteNamespace(ns)
})

test('killed: requests are refused, directly, through kubectl and through the fault proxy; started again: same URL, same certificate, the Job survives', async () => {
  const cluster = testCluster()
  const before = await createJob({ name: 'before-kill', namespace: ns })
  const pid = apiServerPid(cluster.dir)
  const certificate = readFileSync(apiServerCertFile(cluster.dir), 'utf8')
  const proxy = await startFaultProxy(cluster)
  try {
    await killApiServer(cluster)
    expect(isAlive(pid)).toBe(false)
    expect(networkErrorCode(await rejectionOf(read('before-kill')))).toBe('ECONNREFUSED')
    const cli = await runAsync(join(cluster.binDir, 'kubectl'), ['get', 'job', '-n', ns, 'before-kill'], { KUBECONFIG: cluster.kubeconfig })
    expect(cli.code).not.toBe(0)
    expect(cli.stderr).toMatch(/refused/) // 'connect: connection refused', or 'The connection to the server … was refused'
    const viaProxy = proxy.kubeConfig().makeApiClient(BatchV1Api)
    // The proxy is transparent: an unreachable upstream is a reset, not a 502.
    expect(networkErrorCode(await rejectionOf(viaProxy.readNamespacedJob({ name: 'before-kill', namespace: ns })))).toBe('ECONNRESET')

    await startApiServerAgain(cluster)
    expect(apiServerPid(cluster.dir)).not.toBe(pid)
    expect(readFileSync(apiServerCertFile(cluster.dir), 'utf8')).toBe(certificate)
    // The unchanged kubeconfig (same URL, same CA, same token) works again, and etcd kept the Job.
    expect((await getJob(ns, 'before-kill'))?.metadata?.uid).toBe(before.metadata?.uid)
    await expect(viaProxy.readNamespacedJob({ name: 'before-kill', namespace: ns })).resolves.toMatchObject({ metadata: { uid: before.metadata?.uid } })
  } finally {
    await proxy.close()
  }
  // The job controller, scheduler and kwok reconnected: a new Job runs to completion.
  await createJob({ name: 'after-restart', namespace: ns })
  await waitForJobCondition(ns, 'after-restart', 'Complete')
})

test('restartApiServer keeps it down as long as asked; a client polling throughout sees refusals, then success', async () => {
  await createJob({ name: 'polled', namespace: ns })
  const outcomes: { at: number; end: number; error?: string }[] = []
  let polling = true
  const poller = (async () => {
    while (polling) {
      const at = Date.now()
      await read('polled').then(
        () => outcomes.push({ at, end: Date.now() }),
        (e: unknown) => outcomes.push({ at, end: Date.now(), error: networkErrorCode(e) ?? String(e) })
      )
      await new Promise((r) => setTimeout(r, 100))
    }
  })()
  await new Promise((r) => setTimeout(r, 500))
  const killedAt = Date.now()
  const restart = await restartApiServer(testCluster(), 3000)
  await new Promise((r) => setTimeout(r, 500))
  polling = false
  await poller

  expect(restart.downMs).toBeGreaterThanOrEqual(3000)
  expect(restart.unavailableMs).toBeGreaterThanOrEqual(restart.downMs)
  const failed = outcomes.filter((o) => o.error)
  expect(outcomes.filter((o) => o.end < killedAt).every((o) => !o.error)).toBe(true)
  expect(failed.length).toBeGreaterThanOrEqual(10) // 3 s down, a request every ~100 ms
  // While the process is gone, new connections are refused; a request already on a kept-alive
  // connection when the SIGKILL lands sees that connection closed or reset instead.
  const whileDown = failed.filter((o) => o.at < killedAt + 3000).map((o) => o.error)
  expect(whileDown.filter((e) => e === 'ECONNREFUSED').length).toBeGreaterThanOrEqual(whileDown.length - 1)
  expect(whileDown.every((e) => ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET'].includes(e ?? ''))).toBe(true)
  expect(outcomes.at(-1)?.error).toBeUndefined()
})

// Last: the restarts above grew the controllers' reconnect backoff; the tests after this file
// need a cluster whose Jobs start at once.
test('restartControllers: afterwards a Job runs to completion within 30 s', async () => {
  await restartControllers(testCluster())
  await createJob({ name: 'after-controllers', namespace: ns })
  await eventually(
    'Job after-controllers Complete',
    () => getJob(ns, 'after-controllers'),
    (j) => jobCondition(j) === 'Complete',
    30_000
  )
})

const read = (name: string): Promise<unknown> => batchApi().readNamespacedJob({ name, namespace: ns })
