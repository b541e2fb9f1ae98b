// kube-apiserver killed and started again mid-run, as fault tests do it: clients fail while it is
// down and succeed after it at the same URL, with the same certificate; etcd keeps every object,
// and the controllers and kwok reconnect by themselves.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { BatchV1Api } from '@kubernetes/client-node'
import { apiServerCertFile, apiServerPid, killApiServer, restartApiServer, startApiServerAgain } from './cluster/apiserver.ts'
import { isAlive } from './cluster/processes.ts'
import { batchApi, createJob, createNamespace, deleteNamespace, getJob, testCluster, waitForJobCondition } from './cluster/testenv.ts'
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

const read = (name: string): Promise<unknown> => batchApi().readNamespacedJob({ name, namespace: ns })

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
    expect(cli.stderr).toContain('connection refused')
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
  const outcomes: { at: number; error?: string }[] = []
  let polling = true
  const poller = (async () => {
    while (polling) {
      const at = Date.now()
      await read('polled').then(
        () => outcomes.push({ at }),
        (e: unknown) => outcomes.push({ at, error: networkErrorCode(e) ?? String(e) })
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
  expect(outcomes.filter((o) => o.at < killedAt).every((o) => !o.error)).toBe(true)
  expect(failed.length).toBeGreaterThanOrEqual(10) // 3 s down, a request every ~100 ms
  expect(failed.filter((o) => o.at < killedAt + 3000).every((o) => o.error === 'ECONNREFUSED')).toBe(true)
  expect(outcomes.at(-1)?.error).toBeUndefined()
})
