// The README's quickstart, followed as written, under nektos/act (a runner nobody here wrote) on
// the real cluster: a login step that leaves ~/.kube/config behind, one job-sweeper step with the
// README's inputs and no kubeconfig, then helm upgrade --wait; the post step at the job's end.
// Without job-sweeper, its helm upgrade fails on the prior migration Job (test/act.test.ts and the
// demo show that refusal), and so does this test.
import { mkdtempSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { load } from 'js-yaml'
import { buildAct, repository, runAct, stepLog, stepResult } from './act/act.ts'
import { getJob, testCluster, waitForJobCondition } from './cluster/testenv.ts'
import { chart, helmChart, release, useScenario } from './scenario.ts'

interface Step {
  name?: string
  uses?: string
  run?: string
  with?: Record<string, unknown>
}

// No decoy may get a TTL or job-sweeper's label.
const scenario = useScenario('quickstart', async (decoys) => {
  for (const d of decoys) {
    const job = await getJob(d.namespace, d.name)
    expect([d.name, job?.metadata?.uid, job?.spec?.ttlSecondsAfterFinished, job?.metadata?.labels?.['job-sweeper.io/managed']]).toEqual([
      d.name,
      d.uid,
      undefined,
      undefined
    ])
  }
})

/** The steps of the README's quickstart workflow (the first YAML block under `## Quickstart`). */
function readmeSteps(): Step[] {
  const readme = readFileSync(join(repository, 'README.md'), 'utf8')
  const section = readme.split('\n## Quickstart\n')[1]?.split('\n## ')[0] ?? ''
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section)?.[1] ?? ''
  const workflow = load(yaml) as { jobs: Record<string, { steps: Step[] }> }
  return Object.values(workflow.jobs)[0].steps
}

let act: string
beforeAll(() => {
  act = buildAct()
}, 20 * 60_000)

test("the README's quickstart: login first, then job-sweeper with no kubeconfig input, then helm upgrade", () => {
  const steps = readmeSteps()
  const at = (match: (s: Step) => boolean) => steps.findIndex(match)
  const login = at((s) => /update-kubeconfig|aks-set-context|get-gke-credentials/.test(`${s.run ?? ''}${s.uses ?? ''}`))
  const sweeper = at((s) => s.uses?.startsWith('job-sweeper/job-sweeper@') === true)
  const upgrade = at((s) => /^helm upgrade /.test(s.run ?? ''))
  expect([login >= 0, login < sweeper, sweeper < upgrade]).toEqual([true, true, true])
  // The workflow run below takes the same inputs (with the scenario's names).
  const ours = (load(readFileSync(join(import.meta.dirname, 'act', 'quickstart.yml'), 'utf8')) as { jobs: { deploy: { steps: Step[] } } }).jobs.deploy.steps
  const step = ours.find((s) => s.uses === './')
  expect(Object.keys(step?.with ?? {}).sort()).toEqual(Object.keys(steps[sweeper].with ?? {}).sort())
  expect(Object.keys(steps[sweeper].with ?? {})).not.toContain('kubeconfig')
})

test("followed as written, the quickstart's upgrade goes through the prior migration Job, and the post step gives the new one its TTL", async () => {
  const { ns } = scenario
  expect(helmChart('install', ns, {}, '--wait', '--wait-for-jobs').code).toBe(0)
  const prior = await waitForJobCondition(ns, `${release}-migrate`, 'Complete')
  const started = Date.now()
  const run = await runAct(
    act,
    'quickstart.yml',
    { ACTION_DIR: repository, NAMESPACE: ns, CHART: chart },
    { KUBECONFIG_FILE: testCluster().kubeconfig },
    {
      artifacts: mkdtempSync(join(tmpdir(), 'job-sweeper-quickstart-artifacts-'))
    }
  )
  const seconds = (Date.now() - started) / 1000
  const steps = ['log in to the cluster', 'job-sweeper', 'helm upgrade'].map((s) => [s, stepResult(run, 'deploy', 'Main', s)])
  const post = stepResult(run, 'deploy', 'Post', 'job-sweeper')
  const said = { stderr: run.code === 0 ? '' : run.stderr, mainLog: run.code === 0 ? '' : stepLog(run, 'deploy', 'Main', 'job-sweeper') }
  expect({ code: run.code, steps, post, ...said }).toEqual({ code: 0, steps: steps.map(([s]) => [s, 'success']), post: 'success', stderr: '', mainLog: '' })
  console.log(`the README's quickstart under act: login, job-sweeper, helm upgrade --wait and the post step in ${seconds.toFixed(1)} s`)

  // The upgrade's migration Job is a new one, with the post step's TTL (the default ttl 1h once it
  // finished; while it runs, the larger failure-grace 24h as an upper bound) and its annotations.
  const migrate = await getJob(ns, `${release}-migrate`)
  expect(migrate?.metadata?.uid).not.toBe(prior.metadata?.uid)
  expect([3600, 86400]).toContain(migrate?.spec?.ttlSecondsAfterFinished)
  expect(migrate?.metadata?.annotations).toMatchObject({ 'job-sweeper.io/ttl': '1h', 'job-sweeper.io/failure-grace': '1d' })
})
