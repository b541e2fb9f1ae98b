// The scope is re-checked on the fresh Job before every delete, the label selector included: a
// Job relabelled out of a `selector` scope while pre waits on it (an operator keeping it for
// inspection), or between a sweep's list and its delete, is kept, and the summary says why; a Job
// that still matches is deleted beside it.
import { join } from 'node:path'
import { outputNames } from './action.ts'
import { HOLD_LABEL } from './cluster/kwok.ts'
import { batchApi, createJob, eventually, getJob, kubeConfig, testCluster, waitForJobCondition } from './cluster/testenv.ts'
import { startFaultProxy, type FaultProxy } from './faults/proxy.ts'
import { runAsync } from './faults/observe.ts'
import { expectNoStackTrace, runThrough } from './faults/product.ts'
import { useScenario } from './scenario.ts'
import { KubeJobsClient } from '../src/kube/client.ts'
import { execute } from '../src/execute/execute.ts'
import { planSweep } from '../src/plan/retention.ts'
import { escapeMarkdown } from '../src/report/markdown.ts'
import { parseSettings } from '../src/settings/settings.ts'

const scenario = useScenario('scope')
let ns: string
let proxy: FaultProxy | undefined
beforeEach(() => {
  ns = scenario.ns
})
afterEach(async () => {
  await proxy?.close()
  proxy = undefined
})

// Not a label any decoy carries: the decoys are out of scope, and must survive.
const ROLE = 'scope.test/role'
const SELECTOR = `${ROLE}=migrate`

/** A Job labelled into the selector's scope, its pod held Running until `finish()`. */
async function heldJob(name: string): Promise<{ finish: () => Promise<void> }> {
  await createJob({ namespace: ns, name, behaviour: 'hold', labels: { [ROLE]: 'migrate' } })
  await eventually(
    `${name} running`,
    () => getJob(ns, name),
    (j) => j?.status?.active === 1
  )
  return {
    finish: async () => {
      // kubectl as a child process, not spawnSync: the proxy serves from this process.
      const done = await runAsync(join(testCluster().binDir, 'kubectl'), ['label', 'pod', '-n', ns, '-l', `job-name=${name}`, `${HOLD_LABEL}-`], {
        KUBECONFIG: testCluster().kubeconfig
      })
      if (done.code !== 0) throw new Error(`could not let ${name} finish: ${done.stderr}`)
    }
  }
}

/** What an operator does to keep a Job for inspection: relabel it out of the pipeline's selector. */
const relabel = (name: string): Promise<unknown> =>
  batchApi().patchNamespacedJob({ name, namespace: ns, body: [{ op: 'replace', path: `/metadata/labels/${ROLE.replace('/', '~1')}`, value: 'inspect' }] })

test('pre with a selector: a Job relabelled out of it while pre waits is kept when it finishes, and the summary says why; one still matching is deleted', async () => {
  const [kept, pruned] = ['migrate-inspect', 'migrate-current']
  const jobs = [await heldJob(kept), await heldJob(pruned)]
  proxy = await startFaultProxy(testCluster())
  const pending = runThrough(proxy, { selector: SELECTOR, namespace: ns, 'on-running': 'wait', 'wait-timeout': '5m' })
  // The plan is made (the list) and the wait has begun (the watch): now the operator relabels.
  await proxy.requests.waitFor({ method: 'GET', path: `/apis/batch/v1/namespaces/${ns}/jobs`, query: { watch: 'true' } }, 1, 120_000)
  await relabel(kept)
  for (const job of jobs) await job.finish()
  const run = await pending
  expectNoStackTrace(run)
  expect(run.code).toBe(0)
  expect(outputNames(run, 'waited')).toEqual([pruned, kept])
  expect(outputNames(run, 'pruned')).toEqual([pruned])
  expect(outputNames(run, 'kept')).toEqual([kept])
  const why = `changed while it was waited for: no longer in scope: its labels no longer match selector '${SELECTOR}'`
  expect(JSON.parse(run.outputs.kept)[0].reason).toBe(why)
  expect(run.summary).toMatch(new RegExp(`\\| ${kept} \\| succeeded \\| waited [^|]+, then kept \\| `))
  expect(run.summary).toContain(escapeMarkdown(why))
  expect(run.summary).toContain('**✅ 1 pruned (1 after waiting) · 1 kept (1 after waiting)**')
  expect((await getJob(ns, kept))?.metadata?.labels?.[ROLE]).toBe('inspect')
  expect(await getJob(ns, pruned)).toBeUndefined()
})

test("sweep with a selector: a Job relabelled out of it between the sweep's list and its delete is kept, saying why; one still matching is deleted", async () => {
  const [kept, pruned] = ['report-inspect', 'report-old']
  for (const name of [kept, pruned]) await createJob({ namespace: ns, name, labels: { [ROLE]: 'migrate' } })
  for (const name of [kept, pruned]) await waitForJobCondition(ns, name, 'Complete')
  await new Promise((r) => setTimeout(r, 1500)) // past their ttl of 1s
  const settings = parseSettings((n) => ({ phase: 'sweep', namespace: ns, selector: SELECTOR, ttl: '1s' })[n] ?? '', {})
  const client = new KubeJobsClient(kubeConfig())
  try {
    const { jobs, resourceVersion } = await client.listJobs(ns, SELECTOR)
    const plan = planSweep({ namespace: ns, jobs, resourceVersions: { [ns]: resourceVersion } }, settings, new Date())
    expect(plan.jobs.map((p) => [p.name, p.action])).toEqual([
      [kept, 'delete'],
      [pruned, 'delete']
    ])
    // Between the list and the delete: its resourceVersion changes, so the delete is refused (409)
    // and the decision is made again on the fresh copy.
    await relabel(kept)
    const result = await execute(plan, client, settings, { info: () => undefined })
    expect(result.errors).toEqual([])
    const byName = Object.fromEntries(result.outcomes.map((o) => [o.name, o]))
    expect([byName[kept].result, byName[kept].reason]).toEqual([
      'kept',
      `changed since it was planned: no longer in scope: its labels no longer match selector '${SELECTOR}'`
    ])
    expect(byName[pruned].result).toBe('pruned')
  } finally {
    await client.close()
  }
  expect(await getJob(ns, kept)).toBeDefined()
  expect(await getJob(ns, pruned)).toBeUndefined()
})
