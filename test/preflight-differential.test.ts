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
import { sharedKeys } from './differential/groups/shared-keys.ts'
import { hooks, ownership, pending } from './differential/groups/releases.ts'
import { yaml } from './differential/groups/yaml.ts'
import { lostDecoys, runScenario, startGroup, stopGroup, type DiffScenario, type GroupEnv, type Outcome, type ScenarioRun } from './differential/harness.ts'

const groups = [fields, jobs, drift, admission, unserved, crds, crdsDirectory, yaml, hooks, pending, ownership, sharedKeys]
const runId = randomBytes(3).toString('hex')
const tally: { scenario: string; agrees: boolean }[] = []

/** Whether helm did what the scenario says it does on this set; undefined when it did. */
function helmDidNot(expected: Outcome, run: ScenarioRun): string | undefined {
  const failed = run.upgrade.code !== 0
  if (expected === 'applies') return failed ? 'helm upgrade was to apply on this set, and failed' : undefined
  if (!(expected instanceof RegExp)) {
    if (failed) return `helm upgrade was to apply with a warning on this set (${expected.warns}), and failed`
    return expected.warns.test(run.upgrade.stderr) ? undefined : `helm upgrade applied on this set, but warned nothing like ${expected.warns}`
  }
  if (!failed) return `helm upgrade was to fail on this set (${expected}), and applied`
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

/** DIFFERENTIAL_RECORD=<file>: one JSON line per scenario (what preflight said of each object it fails or leaves to pre, Helm's error), for a work list. */
function record(file: string, scenario: DiffScenario, run: ScenarioRun): void {
  let rows: string[]
  try {
    const json = JSON.parse(run.preflight.stdout) as {
      objects?: { kind: string; name: string; reason: string; failsUpgrade?: boolean; clearedByPre?: boolean }[]
    }
    rows = (json.objects ?? [])
      .filter((o) => o.failsUpgrade || o.clearedByPre)
      .map((o) => `${o.clearedByPre ? 'cleared by pre' : 'fails'} ${o.kind} ${o.name}: ${o.reason}`)
  } catch {
    rows = [`no JSON (exit ${run.preflight.code}): ${run.preflight.stderr.trim().split('\n')[0]}`]
  }
  const line = {
    scenario: scenario.name,
    helm: helmMajor(),
    agrees: run.agreement.agrees,
    why: run.agreement.why,
    wouldApply: run.says?.wouldApply,
    rows,
    blocks: run.says?.blocks,
    pre: run.pre?.code,
    upgrade: run.upgrade.code,
    helmError: run.upgrade.stderr.replace(/^level=.*\n/gm, '').trim()
  }
  appendFileSync(file, `${JSON.stringify(line)}\n`)
}

async function check(env: GroupEnv, scenario: DiffScenario, exactRendering?: boolean): Promise<void> {
  const run = await runScenario(env, scenario, exactRendering)
  tally.push({ scenario: scenario.name, agrees: run.agreement.agrees })
  if (process.env.DIFFERENTIAL_RECORD) record(process.env.DIFFERENTIAL_RECORD, scenario, run)
  const problems = run.agreement.agrees ? [] : [`preflight disagrees with helm upgrade: ${run.agreement.why.join('; ')}`]
  const helm = helmDidNot(scenario.helm[helmMajor()], run)
  if (helm) problems.push(`scenario: ${helm}`)
  if (run.appliedWrong) problems.push(`scenario: helm upgrade applied, but ${run.appliedWrong}`)
  if (scenario.preRuns && run.pre?.code !== 0)
    problems.push(`scenario: pre was to clear the Job and go on, but it ${run.pre ? `exited ${run.pre.code}` : 'did not run'}`)
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
      test(scenario.name, () => check(env as GroupEnv, scenario, group.exactRendering), 300_000)
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
