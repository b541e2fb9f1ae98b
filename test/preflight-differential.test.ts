// Preflight against Helm itself, scenario by scenario (differential testing): each scenario makes
// one change to an installed release, renders it, asks `job-sweeper preflight --json`, runs `pre`
// when preflight counts on it to clear Jobs (as a deploy would), then runs the real `helm upgrade`
// with the same values, and asserts that they agree: wouldApply ⇔ helm exit 0, and each object or
// release-level reason Helm's error names is among the failures preflight names. Each also asserts
// Helm's own outcome on this set (Helm 4 applies server-side, Helm 3 patches), which proves the
// scenario tests what it names. The last line says how many agreed.
//
// Cluster-scoped objects (CRDs, admission policies) are named after the run or the group's
// namespace, so the suite shares the cluster with others.
import { randomBytes } from 'node:crypto'
import { appendFileSync } from 'node:fs'
import { helmMajor, testCluster } from './cluster/testenv.ts'
import { admission, unserved } from './differential/groups/admission.ts'
import { crds, crdsDirectory } from './differential/groups/crds.ts'
import { drift } from './differential/groups/drift.ts'
import { fields } from './differential/groups/fields.ts'
import { jobs } from './differential/groups/jobs.ts'
import { hooks, ownership, pending } from './differential/groups/releases.ts'
import { yaml } from './differential/groups/yaml.ts'
import { lostDecoys, runScenario, startGroup, stopGroup, type DiffScenario, type GroupEnv, type Outcome, type ScenarioRun } from './differential/harness.ts'

const groups = [fields, jobs, drift, admission, unserved, crds, crdsDirectory, yaml, hooks, pending, ownership]
const runId = randomBytes(3).toString('hex')
const tally: { scenario: string; agrees: boolean }[] = []

/** Whether helm did what the scenario says it does on this set; undefined when it did. */
function helmDidNot(expected: Outcome, run: ScenarioRun): string | undefined {
  if (expected === 'applies') return run.upgrade.code === 0 ? undefined : 'helm upgrade was to apply on this set, and failed'
  if (run.upgrade.code === 0) return `helm upgrade was to fail on this set (${expected}), and applied`
  return expected.test(run.upgrade.stderr) ? undefined : `helm upgrade failed on this set, but not with ${expected}`
}

function report(run: ScenarioRun, problems: string[]): string {
  const parts = [
    ...problems,
    '',
    `--- preflight --json (exit ${run.preflight.code}):`,
    run.preflight.stdout.trim(),
    '--- preflight stderr:',
    run.preflight.stderr.trim()
  ]
  if (run.pre) parts.push(`--- pre (exit ${run.pre.code}):`, run.pre.stdout.trim(), run.pre.stderr.trim())
  parts.push(`--- helm upgrade (exit ${run.upgrade.code}) stderr:`, run.upgrade.stderr.trim())
  return parts.join('\n')
}

async function check(env: GroupEnv, scenario: DiffScenario): Promise<void> {
  const run = await runScenario(env, scenario)
  tally.push({ scenario: scenario.name, agrees: run.agreement.agrees })
  // DIFFERENTIAL_RECORD=<file>: one JSON line per scenario (verdicts, Helm's error), for a work list.
  const record = process.env.DIFFERENTIAL_RECORD
  if (record)
    appendFileSync(
      record,
      `${JSON.stringify({ scenario: scenario.name, helm: helmMajor(), agrees: run.agreement.agrees, why: run.agreement.why, preflight: run.says, preflightExit: run.preflight.code, pre: run.pre?.code, upgrade: run.upgrade.code, stderr: run.upgrade.stderr.replace(/^level=.*\n/gm, '').trim() })}\n`
    )
  const problems = run.agreement.agrees ? [] : [`preflight disagrees with helm upgrade: ${run.agreement.why.join('; ')}`]
  const helm = helmDidNot(scenario.helm[helmMajor()], run)
  if (helm) problems.push(`scenario: ${helm}`)
  if (problems.length > 0) throw new Error(report(run, problems))
}

for (const group of groups) {
  describe(group.title, () => {
    let env: GroupEnv | undefined
    beforeAll(async () => {
      env = await startGroup(group, runId)
    }, 300_000)
    afterEach(async () => {
      if (env) expect(await lostDecoys(env)).toEqual([])
    })
    afterAll(() => stopGroup(group, env), 120_000)

    for (const scenario of group.scenarios) {
      test(scenario.name, () => check(env as GroupEnv, scenario), 300_000)
    }
  })
}

afterAll(() => {
  // Every scenario counts: one that could not run (its group failed to start) does not agree.
  const total = groups.reduce((n, g) => n + g.scenarios.length, 0)
  const agreed = tally.filter((t) => t.agrees).length
  const { helmVersion, version } = testCluster()
  console.log(`preflight agrees with helm upgrade in ${agreed}/${total} scenarios (Helm ${helmVersion}, Kubernetes ${version})`)
})
