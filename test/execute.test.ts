// The executor against the real cluster, for the safety rules a scenario cannot easily provoke:
// preconditions, re-deciding on a fresh object, other clients' deletes, concurrent runs.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CANCEL_GRACE_MS, KubeJobsClient } from '../src/kube/client.ts'
import { RunCancelled } from '../src/kube/retry.ts'
import { DiskSink } from '../src/store/disk-sink.ts'
import { execute } from '../src/execute/execute.ts'
import { planPrune, type Plan } from '../src/plan/plan.ts'
import { planSweep } from '../src/plan/retention.ts'
import { parseSettings, type Settings } from '../src/settings/settings.ts'
import { batchApi, coreApi, createJob, eventually, getJob, kubeConfig, testCluster, waitForJobCondition } from './cluster/testenv.ts'
import { startFaultProxy } from './faults/proxy.ts'
import { finishedReleaseJob, release, useScenario } from './scenario.ts'

const quiet = { info: () => undefined }
const scenario = useScenario('exec')
let ns: string
beforeEach(() => {
  ns = scenario.ns
})

const settingsOf = (inputs: Record<string, string>): Settings => parseSettings((n) => ({ namespace: ns, ...inputs })[n] ?? '', {})

async function planFor(client: KubeJobsClient, settings: Settings): Promise<Plan> {
  const { jobs, resourceVersion } = await client.listJobs(ns, settings.scope.selector)
  return planPrune({ namespace: ns, jobs, resourceVersions: { [ns]: resourceVersion } }, settings, new Date())
}

async function sweptEvents(name?: string): Promise<string[]> {
  const events = await coreApi().listNamespacedEvent({ namespace: ns })
  return events.items.filter((e) => e.reason === 'JobSwept' && (name === undefined || e.involvedObject.name === name)).map((e) => e.involvedObject.name ?? '')
}

test('a Job that was replaced by a new one of the same name after planning is left alone (uid precondition)', async () => {
  const client = new KubeJobsClient(kubeConfig())
  const settings = settingsOf({ jobs: 'db-migrate' })
  await createJob({ namespace: ns, name: 'db-migrate' })
  await waitForJobCondition(ns, 'db-migrate', 'Complete')
  const plan = await planFor(client, settings)
  expect(plan.jobs.map((p) => p.action)).toEqual(['delete'])

  // Between plan and execute, someone deletes the Job and creates a new one with the same name.
  await batchApi().deleteNamespacedJob({ name: 'db-migrate', namespace: ns, propagationPolicy: 'Foreground' })
  await eventually(
    'db-migrate gone',
    () => getJob(ns, 'db-migrate'),
    (j) => j === undefined
  )
  const replacement = await createJob({ namespace: ns, name: 'db-migrate' })

  const result = await execute(plan, client, settings, quiet)
  expect(result.errors).toEqual([])
  expect(result.outcomes.map((o) => [o.name, o.result])).toEqual([['db-migrate', 'replaced']])
  expect((await getJob(ns, 'db-migrate'))?.metadata?.uid).toBe(replacement.metadata?.uid)
})

test('a Job that became a Helm hook after planning is decided again on its fresh copy, and kept', async () => {
  const client = new KubeJobsClient(kubeConfig())
  const settings = settingsOf({ release })
  await finishedReleaseJob(ns, `${release}-migrate`)
  await finishedReleaseJob(ns, `${release}-seed`)
  const plan = await planFor(client, settings)
  expect(plan.jobs.filter((p) => p.name.startsWith(`${release}-m`) || p.name.startsWith(`${release}-s`)).map((p) => [p.name, p.action])).toEqual([
    [`${release}-migrate`, 'delete'],
    [`${release}-seed`, 'delete']
  ])

  // After planning, the chart turns the migration into a hook: its resourceVersion changes.
  await batchApi().patchNamespacedJob({
    name: `${release}-migrate`,
    namespace: ns,
    body: [{ op: 'add', path: '/metadata/annotations/helm.sh~1hook', value: 'pre-upgrade' }]
  })
  const result = await execute(plan, client, settings, quiet)
  expect(result.errors).toEqual([])
  const byName = Object.fromEntries(result.outcomes.map((o) => [o.name, o]))
  expect(byName[`${release}-migrate`].result).toBe('kept')
  expect(byName[`${release}-migrate`].reason).toContain('changed since it was planned: hook Job (helm.sh/hook: pre-upgrade)')
  expect(await getJob(ns, `${release}-migrate`)).toBeDefined()
  // Positive control: the Job that did not change is deleted.
  expect(byName[`${release}-seed`].result).toBe('pruned')
  expect(await getJob(ns, `${release}-seed`)).toBeUndefined()
})

test('a Job another client is already deleting is waited for, never deleted again nor counted as pruned', async () => {
  const client = new KubeJobsClient(kubeConfig())
  const settings = settingsOf({ jobs: 'theirs,ours', 'wait-timeout': '20s' })
  for (const name of ['theirs', 'ours']) {
    await createJob({ namespace: ns, name })
    await waitForJobCondition(ns, name, 'Complete')
  }
  await batchApi().patchNamespacedJob({ name: 'theirs', namespace: ns, body: [{ op: 'add', path: '/metadata/finalizers', value: ['example.com/hold'] }] })
  const plan = await planFor(client, settings)
  // Someone else deletes `theirs` after the plan; a finalizer holds it for a moment.
  await batchApi().deleteNamespacedJob({ name: 'theirs', namespace: ns, propagationPolicy: 'Background' })
  setTimeout(() => {
    void batchApi().patchNamespacedJob({ name: 'theirs', namespace: ns, body: [{ op: 'remove', path: '/metadata/finalizers' }] })
  }, 2000)

  const result = await execute(plan, client, settings, quiet)
  expect(result.errors).toEqual([])
  const byName = Object.fromEntries(result.outcomes.map((o) => [o.name, o]))
  expect(byName.theirs.result).toBe('gone')
  expect(byName.theirs.reason).toContain('being deleted by someone else')
  expect(byName.ours.result).toBe('pruned')
  expect(await getJob(ns, 'theirs')).toBeUndefined()
  expect((await sweptEvents()).sort()).toEqual(['ours'])
})

test('two runs at once over the same 30 Jobs: each Job is deleted once, with one Event, and the decoys stay', async () => {
  const names = Array.from({ length: 30 }, (_, i) => `twice-${String(i).padStart(2, '0')}`)
  await Promise.all(names.map((name) => createJob({ namespace: ns, name, labels: { batch: 'twice' } })))
  await eventually(
    'all 30 complete',
    async () => (await batchApi().listNamespacedJob({ namespace: ns, labelSelector: 'batch=twice' })).items,
    (jobs) => jobs.filter((j) => j.status?.succeeded === 1).length === 30
  )
  const settings = settingsOf({ selector: 'batch=twice' })
  const [a, b] = [new KubeJobsClient(kubeConfig()), new KubeJobsClient(kubeConfig())]
  const [planA, planB] = await Promise.all([planFor(a, settings), planFor(b, settings)])
  const [ra, rb] = await Promise.all([execute(planA, a, settings, quiet), execute(planB, b, settings, quiet)])
  expect([...ra.errors, ...rb.errors]).toEqual([])
  const pruned = [...ra.outcomes, ...rb.outcomes].filter((o) => o.result === 'pruned').map((o) => o.name)
  expect(pruned.sort()).toEqual(names)
  expect((await sweptEvents()).sort()).toEqual(names)
  expect((await batchApi().listNamespacedJob({ namespace: ns, labelSelector: 'batch=twice' })).items).toEqual([])
})

test('a Job held by a finalizer that is not Kubernetes’ own is reported, never stripped', async () => {
  const client = new KubeJobsClient(kubeConfig())
  const settings = settingsOf({ jobs: 'held-by-finalizer', 'wait-timeout': '3s' })
  const job = await createJob({ namespace: ns, name: 'held-by-finalizer' })
  await waitForJobCondition(ns, 'held-by-finalizer', 'Complete')
  await batchApi().patchNamespacedJob({
    name: 'held-by-finalizer',
    namespace: ns,
    body: [{ op: 'add', path: '/metadata/finalizers', value: ['example.com/keep'] }]
  })
  const result = await execute(await planFor(client, settings), client, settings, quiet)
  expect(result.errors).toHaveLength(1)
  expect(result.errors[0]).toContain('Job ' + ns + '/held-by-finalizer was deleted but is not gone after 3s')
  expect(result.errors[0]).toContain('stuck on finalizer example.com/keep')
  const still = await getJob(ns, 'held-by-finalizer')
  expect(still?.metadata?.uid).toBe(job.metadata?.uid)
  expect(still?.metadata?.finalizers).toContain('example.com/keep')
  await batchApi().patchNamespacedJob({ name: 'held-by-finalizer', namespace: ns, body: [{ op: 'remove', path: '/metadata/finalizers' }] })
})

/** Creates `n` Jobs labelled batch=`batch` (named `<batch>-NN`) and waits until each succeeded. */
async function completedBatch(batch: string, n: number): Promise<void> {
  const names = Array.from({ length: n }, (_, i) => `${batch}-${String(i).padStart(2, '0')}`)
  await Promise.all(names.map((name) => createJob({ namespace: ns, name, labels: { batch } })))
  await eventually(
    `all ${n} complete`,
    async () => (await batchApi().listNamespacedJob({ namespace: ns, labelSelector: `batch=${batch}` })).items,
    (jobs) => jobs.filter((j) => j.status?.succeeded === 1).length === n
  )
}

test('the happy path costs at most two requests per pruned Job (delete, Event), plus the list and one watch', async () => {
  await completedBatch('cheap', 20)
  const client = new KubeJobsClient(kubeConfig())
  const settings = settingsOf({ selector: 'batch=cheap', 'harvest-logs': 'none' })
  const plan = await planFor(client, settings)
  const before = client.requests
  const result = await execute(plan, client, settings, quiet)
  expect(result.outcomes.filter((o) => o.result === 'pruned')).toHaveLength(20)
  // 2 per Job, plus the one watch that sees them go (a reconnect may add one).
  expect(client.requests - before).toBeLessThanOrEqual(2 * 20 + 2)
  expect(client.requests - before).toBeGreaterThanOrEqual(2 * 20)
})

test('requests share a few connections: 20 deletes and their Events do not open a TLS connection each', async () => {
  await completedBatch('reuse', 20)
  const proxy = await startFaultProxy(testCluster())
  try {
    const client = new KubeJobsClient(proxy.kubeConfig())
    const settings = settingsOf({ selector: 'batch=reuse', 'harvest-logs': 'none', concurrency: '4' })
    const result = await execute(await planFor(client, settings), client, settings, quiet)
    expect(result.outcomes.filter((o) => o.result === 'pruned')).toHaveLength(20)
    const requests = proxy.requests.count()
    expect(requests).toBeGreaterThanOrEqual(41) // the list, 20 deletes, 20 Events
    // Without the shared pool every request opened its own connection (42 for 41 requests,
    // measured); with it, about half as many through this proxy, which cannot keep a connection
    // alive after a DELETE with a body (directly to the API server, one connection serves them all).
    expect(proxy.connections).toBeLessThanOrEqual(Math.ceil(requests * 0.75))
  } finally {
    await proxy.close()
  }
})

test('sweep deletes in the background and does not wait for pods', async () => {
  const client = new KubeJobsClient(kubeConfig())
  const settings = parseSettings((n) => ({ phase: 'sweep', namespace: ns, jobs: 'old', ttl: '0s' })[n] ?? '', {})
  const job = await createJob({ namespace: ns, name: 'old' })
  await waitForJobCondition(ns, 'old', 'Complete')
  const { jobs } = await client.listJobs(ns)
  const plan = planSweep({ namespace: ns, jobs }, settings, new Date())
  expect(plan.awaitGone).toBe(false)
  expect(plan.jobs.map((p) => [p.name, p.action, p.propagation])).toEqual([['old', 'delete', 'Background']])
  const result = await execute(plan, client, settings, quiet)
  expect(result.outcomes.map((o) => [o.name, o.result])).toEqual([['old', 'pruned']])
  await eventually(
    'old gone',
    () => getJob(ns, 'old'),
    (j) => j?.metadata?.uid !== job.metadata?.uid
  )
})

test('lists cross pages: every Job arrives when the API server pages them', async () => {
  const names = Array.from({ length: 12 }, (_, i) => `paged-${String(i).padStart(2, '0')}`)
  for (const name of names)
    await batchApi().createNamespacedJob({
      namespace: ns,
      body: { metadata: { name }, spec: { suspend: true, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } } } }
    })
  const paged = new KubeJobsClient(kubeConfig(), { pageSize: 5 })
  const listed = (await paged.listJobs(ns)).jobs.map((j) => j.metadata?.name).filter((n) => n?.startsWith('paged-'))
  expect(listed.sort()).toEqual(names)
  const everywhere = (await paged.listJobs(undefined)).jobs.filter((j) => j.metadata?.namespace === ns && j.metadata?.name?.startsWith('paged-'))
  expect(everywhere).toHaveLength(12)
  // Listed Jobs are trimmed: no pod template, no managedFields.
  expect(JSON.stringify(everywhere[0])).not.toMatch(/template|managedFields|containers/)
})

test('a log read in flight when the run is cancelled ends within the grace (CANCEL_GRACE_MS), leaving nothing written; not cancelled, the same read is saved', async () => {
  const job = await createJob({ namespace: ns, name: `${release}-migrate`, behaviour: 'fail' })
  await waitForJobCondition(ns, `${release}-migrate`, 'Failed')
  const [pod] = (await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/controller-uid=${job.metadata?.uid}` })).items
  const name = pod.metadata?.name ?? ''
  const proxy = await startFaultProxy(testCluster())
  const dir = mkdtempSync(join(tmpdir(), 'cancelled-log-'))
  try {
    // The kubelet's answer comes 20 s late: the read is in flight when the run is cancelled.
    proxy.addRule({ path: /\/pods\/[^/]+\/log$/, fault: { kind: 'delay', ms: 20_000 }, times: 1 })
    const run = new AbortController()
    const client = new KubeJobsClient(proxy.kubeConfig(), { signal: run.signal })
    const sink = new DiskSink(dir)
    const keep = { maxBytes: 1024 * 1024, lastLines: 0 }
    setTimeout(() => run.abort(new RunCancelled('the run was cancelled (SIGINT)')), 500)
    const started = Date.now()
    await expect(client.saveLog(ns, name, 'main', false, keep, () => sink.open(`${name}/main.log`, 'text/plain'))).rejects.toThrow(
      'the run was cancelled (SIGINT)'
    )
    expect(Date.now() - started).toBeLessThan(500 + CANCEL_GRACE_MS + 1_500)
    expect(readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('.log') || String(f).endsWith('.partial'))).toEqual([])
    await client.close()
    // Positive control: a client whose run goes on saves the same log, late as it comes.
    proxy.addRule({ path: /\/pods\/[^/]+\/log$/, fault: { kind: 'delay', ms: 3_000 }, times: 1 })
    const going = new KubeJobsClient(proxy.kubeConfig())
    const saved = await going.saveLog(ns, name, 'main', false, keep, () => sink.open(`${name}/main.log`, 'text/plain'))
    expect(saved.bytes).toBeGreaterThan(0)
    expect(readFileSync(join(dir, name, 'main.log')).length).toBe(saved.bytes)
    await going.close()
  } finally {
    await proxy.close()
  }
})
