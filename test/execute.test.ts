// The executor against the real cluster, for the safety rules a scenario cannot easily provoke.
import { KubeJobsClient } from '../src/kube/client.ts'
import { executePrune } from '../src/execute/prune.ts'
import { planPrune } from '../src/plan/plan.ts'
import { parseSettings } from '../src/settings/settings.ts'
import { batchApi, createJob, getJob, kubeConfig, waitForJobCondition } from './cluster/testenv.ts'
import { useScenario } from './scenario.ts'

const quiet = { info: () => undefined, warning: () => undefined, phase: 'pre' as const }
const scenario = useScenario('exec')
let ns: string
beforeEach(() => {
  ns = scenario.ns
})

test('a Job that was replaced by a new one of the same name after planning is left alone (UID precondition)', async () => {
  const client = new KubeJobsClient(kubeConfig())
  const settings = parseSettings((n) => ({ jobs: 'db-migrate', namespace: ns })[n] ?? '', {})
  await createJob({ namespace: ns, name: 'db-migrate' })
  await waitForJobCondition(ns, 'db-migrate', 'Complete')
  const plan = planPrune({ namespace: ns, jobs: await client.listJobs(ns) }, settings, new Date())
  expect(plan.jobs.map((p) => p.action)).toEqual(['delete'])

  // Between plan and execute, someone deletes the Job and creates a new one with the same name.
  await batchApi().deleteNamespacedJob({ name: 'db-migrate', namespace: ns, propagationPolicy: 'Foreground' })
  await waitFor(async () => (await getJob(ns, 'db-migrate')) === undefined)
  const replacement = await createJob({ namespace: ns, name: 'db-migrate' })

  const result = await executePrune(plan, client, settings, quiet)
  expect(result.errors).toEqual([])
  expect(result.outcomes.map((o) => [o.name, o.result])).toEqual([['db-migrate', 'replaced']])
  expect((await getJob(ns, 'db-migrate'))?.metadata?.uid).toBe(replacement.metadata?.uid)
})

test('a Job held by a finalizer that is not Kubernetes’ own is reported, never stripped', async () => {
  const client = new KubeJobsClient(kubeConfig())
  const settings = parseSettings((n) => ({ jobs: 'held-by-finalizer', namespace: ns, 'wait-timeout': '3s' })[n] ?? '', {})
  const job = await createJob({ namespace: ns, name: 'held-by-finalizer' })
  await waitForJobCondition(ns, 'held-by-finalizer', 'Complete')
  await batchApi().patchNamespacedJob({
    name: 'held-by-finalizer',
    namespace: ns,
    body: [{ op: 'add', path: '/metadata/finalizers', value: ['example.com/keep'] }]
  })
  const plan = planPrune({ namespace: ns, jobs: await client.listJobs(ns) }, settings, new Date())
  const result = await executePrune(plan, client, settings, quiet)
  expect(result.errors).toHaveLength(1)
  expect(result.errors[0]).toContain('Job ' + ns + '/held-by-finalizer was deleted but is not gone after 3s')
  expect(result.errors[0]).toContain('stuck on finalizer example.com/keep')
  const still = await getJob(ns, 'held-by-finalizer')
  expect(still?.metadata?.uid).toBe(job.metadata?.uid)
  expect(still?.metadata?.finalizers).toContain('example.com/keep')
  await batchApi().patchNamespacedJob({ name: 'held-by-finalizer', namespace: ns, body: [{ op: 'remove', path: '/metadata/finalizers' }] })
})

test('lists cross pages: every Job arrives when the API server pages them', async () => {
  const names = Array.from({ length: 12 }, (_, i) => `paged-${String(i).padStart(2, '0')}`)
  for (const name of names)
    await batchApi().createNamespacedJob({
      namespace: ns,
      body: { metadata: { name }, spec: { suspend: true, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } } } }
    })
  const paged = new KubeJobsClient(kubeConfig(), 5)
  const listed = (await paged.listJobs(ns)).map((j) => j.metadata?.name).filter((n) => n?.startsWith('paged-'))
  expect(listed.sort()).toEqual(names)
  const everywhere = (await paged.listAllJobs()).filter((j) => j.metadata?.namespace === ns && j.metadata?.name?.startsWith('paged-'))
  expect(everywhere).toHaveLength(12)
})

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 200))
  }
}
