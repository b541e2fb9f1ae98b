// Saving logs where a real kubelet differs from kwok: a container that never ran has no log (the
// kubelet answers 400, which the fault proxy answers here as kube-apiserver relays it), a
// suspended Job can hold failed pods, and a log read whose answer never comes ends in the stall
// watchdog, not in a dead process.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CoreV1Api } from '@kubernetes/client-node'
import { outputNames } from './action.ts'
import { batchApi, coreApi, eventually, getJob, jobManifest, waitForJobCondition } from './cluster/testenv.ts'
import { useFaultProxy } from './faults/fixture.ts'
import type { FaultProxy } from './faults/proxy.ts'
import { expectNoStackTrace, expectPrunedOnce, runThrough } from './faults/product.ts'
import { release, releaseAnnotations, useScenario } from './scenario.ts'

/** Pod label: its first init container exits 1, the rest never run (see the logs block of kwok-stages.yaml). */
const INIT_FAIL_LABEL = 'job-sweeper.test/init-fail'

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

test('a failed Job whose init container failed: its log is saved, the main container is noted as never ran, and the Job is pruned (on-log-failure: keep)', async () => {
  const name = `${release}-migrate`
  const manifest = jobManifest({ namespace: ns, name, annotations: releaseAnnotations(ns) })
  const template = manifest.spec?.template
  if (!template?.spec || !template.metadata) throw new Error('no pod template')
  template.metadata.labels = { ...template.metadata.labels, [INIT_FAIL_LABEL]: 'true' }
  template.spec.initContainers = [{ name: 'migrate-schema', image: 'example.invalid/migrate:1' }]
  const job = await batchApi().createNamespacedJob({ namespace: ns, body: manifest })
  await waitForJobCondition(ns, name, 'Failed')
  const [pod] = await podsOf(job.metadata?.uid ?? '')
  // The test cluster answers as a kubelet does: the main container never started, so no log.
  const waitingToStart = `container "main" in pod "${pod}" is waiting to start: PodInitializing`
  const refusal = proxy.addRule({
    method: 'GET',
    path: `/api/v1/namespaces/${ns}/pods/${pod}/log`,
    query: { container: 'main' },
    fault: { kind: 'status', code: 400, message: waitingToStart }
  })
  // Positive control: a read of the main container through the proxy is refused, with the message.
  await expect(proxy.kubeConfig().makeApiClient(CoreV1Api).readNamespacedPodLog({ name: pod, namespace: ns, container: 'main' })).rejects.toMatchObject({
    code: 400
  })
  expect(refusal.fired).toBe(1)

  const dir = logsDir()
  const run = await runThrough(proxy, { release, namespace: ns, 'logs-dir': dir })
  expectNoStackTrace(run)
  expect(run.code).toBe(0)
  expect(refusal.fired).toBe(1) // the run never asked for the main container's log
  expect(readFileSync(join(dir, ns, name, pod, 'migrate-schema.log'), 'utf8')).toContain('migrate: applying')
  expect(existsSync(join(dir, ns, name, pod, 'main.log'))).toBe(false)
  expect(readFileSync(join(dir, ns, name, pod, 'main.never-ran.txt'), 'utf8')).toContain('never ran (waiting: PodInitializing)')
  expect(run.summary).toContain(`<code>${ns}/${name}/${pod}/migrate-schema.log (1 container(s) never ran)</code>`)
  expect(run.summary).toContain(`Last lines of failed Job ${name}`)
  const report = JSON.parse(readFileSync(join(dir, 'job-sweeper-pre.json'), 'utf8')) as { jobs: { name: string; logsNeverRan?: string[] }[] }
  expect(report.jobs.find((j) => j.name === name)?.logsNeverRan).toEqual([`${pod}/main (waiting: PodInitializing)`])
  expect(outputNames(run, 'pruned')).toEqual([name])
  await expectPrunedOnce(ns, [name])
})

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
  expect(readFileSync(join(dir, ns, name, failedPod, 'main.log'), 'utf8')).toContain('migrate: applying')
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
