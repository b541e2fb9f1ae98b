// Saving logs when reads go wrong, through the fault proxy: a read refused with 400 (kept, with the
// API server's message), a suspended Job's failed pods, and a read whose answer never comes (the
// stall watchdog). A container that never ran, and the kubelet's real 400 for it, is on the real
// node: test/real-node.test.ts.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { batchApi, coreApi, eventually, getJob, jobManifest, waitForJobCondition } from './cluster/testenv.ts'
import { useFaultProxy } from './faults/fixture.ts'
import type { FaultProxy } from './faults/proxy.ts'
import { expectNoStackTrace, expectPrunedOnce, runThrough } from './faults/product.ts'
import { release, releaseAnnotations, useScenario } from './scenario.ts'
import { savedFolder } from './saved-folder.ts'

const scenario = useScenario('harvest')
const faults = useFaultProxy()
let ns: string
let proxy: FaultProxy
beforeEach(() => {
  ns = scenario.ns
  proxy = faults.proxy
})

const logsDir = (): string => mkdtempSync(join(tmpdir(), 'harvest-logs-'))
const podsOf = async (uid: string): Promise<string[]> =>
  (await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/controller-uid=${uid}` })).items.map((p) => p.metadata?.name ?? '')

test('a log read refused with 400 keeps the API server’s message: the Job is kept and the error says why', async () => {
  const name = `${release}-migrate`
  const job = await batchApi().createNamespacedJob({
    namespace: ns,
    body: jobManifest({ namespace: ns, name, behaviour: 'fail', annotations: releaseAnnotations(ns) })
  })
  await waitForJobCondition(ns, name, 'Failed')
  const [pod] = await podsOf(job.metadata?.uid ?? '')
  const message = `container "main" in pod "${pod}" is terminated`
  const refusal = proxy.addRule({ method: 'GET', path: `/api/v1/namespaces/${ns}/pods/${pod}/log`, fault: { kind: 'status', code: 400, message } })
  const run = await runThrough(proxy, { release, namespace: ns, 'logs-dir': logsDir() })
  expectNoStackTrace(run)
  expect(run.code).toBe(1)
  expect(refusal.fired).toBe(1) // a 400 is final: not retried
  expect(run.stdout).toContain(
    `::error::Job ${ns}/${name} was kept: its logs could not all be saved (cannot save the log of ${pod}/main: 400 Bad Request: ${message})`
  )
  expect(await getJob(ns, name)).toBeDefined()
})

test('a suspended Job with a failed pod: the pod’s log is saved before the Job is deleted', async () => {
  const name = `${release}-migrate`
  // Pods fail, and the Job would retry (after the controller's 10 s backoff) but is suspended first.
  const job = await batchApi().createNamespacedJob({
    namespace: ns,
    body: jobManifest({ namespace: ns, name, behaviour: 'fail', annotations: releaseAnnotations(ns), spec: { backoffLimit: 6 } })
  })
  await eventually(
    `${name} has a failed pod`,
    () => getJob(ns, name),
    (j) => (j?.status?.failed ?? 0) >= 1
  )
  await batchApi().patchNamespacedJob({ name, namespace: ns, body: [{ op: 'add', path: '/spec/suspend', value: true }] })
  await eventually(
    `${name} suspended, no pod active`,
    () => getJob(ns, name),
    (j) => j?.spec?.suspend === true && !j.status?.active && (j.status?.conditions ?? []).some((c) => c.type === 'Suspended' && c.status === 'True')
  )
  const [failedPod] = await podsOf(job.metadata?.uid ?? '')
  expect(failedPod).toBeDefined()

  const dir = logsDir()
  const run = await runThrough(proxy, { release, namespace: ns, 'logs-dir': dir })
  expectNoStackTrace(run)
  expect(run.code).toBe(0)
  expect(JSON.parse(run.outputs.pruned)).toEqual([expect.objectContaining({ name, status: 'suspended' })])
  expect(readFileSync(join(savedFolder(dir, ns, name, job.metadata?.uid), failedPod, 'main.log'), 'utf8')).toContain('migrate: applying')
  // Read before the delete.
  const order = proxy.requests.all.map((r) => `${r.method} ${r.path}`)
  expect(order.findIndex((r) => r.endsWith(`/pods/${failedPod}/log`))).toBeGreaterThanOrEqual(0)
  expect(order.findIndex((r) => r.endsWith(`/pods/${failedPod}/log`))).toBeLessThan(order.findIndex((r) => r.startsWith('DELETE')))
  await expectPrunedOnce(ns, [name])
})

test('a log read whose answer never comes: the stall watchdog ends it, the run reports the failure and writes its summary; the Job is kept', async () => {
  const name = `${release}-migrate`
  const job = await batchApi().createNamespacedJob({
    namespace: ns,
    body: jobManifest({ namespace: ns, name, behaviour: 'fail', annotations: releaseAnnotations(ns) })
  })
  await waitForJobCondition(ns, name, 'Failed')
  const [pod] = await podsOf(job.metadata?.uid ?? '')
  // Held past the 60 s stall watchdog (and so past the 60 s retry budget).
  const hold = proxy.addRule({ method: 'GET', path: `/api/v1/namespaces/${ns}/pods/${pod}/log`, fault: { kind: 'delay', ms: 75_000 } })
  const dir = logsDir()
  const run = await runThrough(proxy, { release, namespace: ns, 'logs-dir': dir })
  expectNoStackTrace(run)
  expect(hold.fired).toBe(1)
  expect(run.code).toBe(1)
  expect(run.stdout).toContain(`read the log of ${ns}/${pod}/main kept failing`)
  expect(run.summary).toContain(`| ${name} |`)
  expect(run.outputs['pruned-count']).toBe('0')
  expect(readdirSync(dir)).toContain('job-sweeper-pre.json')
  expect(await getJob(ns, name)).toBeDefined()
}, 240_000)
