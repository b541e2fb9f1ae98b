// The pre phase's planner, table-driven: every rule, with the reason users will read.
import type { ManifestDifference, Observed } from '../../src/observe/observed.ts'
import { planPrune, shouldHarvest, type JobAction } from '../../src/plan/plan.ts'
import { parseSettings, type Settings } from '../../src/settings/settings.ts'
import { neverStarted } from '../../src/observe/pod-start.ts'
import type { V1Job, V1Pod } from '@kubernetes/client-node'
import { NOW, newJob, type JobShape } from './jobs.ts'
import { imagePullBackOff, initCrashLoop, running, unschedulable } from './pods.ts'

function settings(inputs: Record<string, string>): Settings {
  // The planner gets the manifest's verdicts from Observed; the file itself is not read here.
  return parseSettings((name) => inputs[name] ?? '', {}, { readText: () => '', exists: () => false })
}

interface Case {
  name: string
  inputs: Record<string, string>
  jobs: JobShape[]
  manifest?: Record<string, ManifestDifference | undefined>
  /** Job name → its pods, as a kubelet writes them: observe's verdict (pod-start.ts) goes on the Job. */
  pods?: Record<string, V1Pod[]>
  /** Job name → action and a fragment of the reason; Jobs out of scope are absent. */
  expected: Record<string, [JobAction, string]>
}

const cases: Case[] = [
  {
    name: 'succeeded Job of the release → delete',
    inputs: { release: 'app' },
    jobs: [{ name: 'app-migrate', release: 'app' }],
    expected: { 'app-migrate': ['delete', 'succeeded; a Job’s pod template is immutable'] }
  },
  {
    name: 'failed Job of the release → delete',
    inputs: { release: 'app' },
    jobs: [{ name: 'app-migrate', release: 'app', status: 'failed' }],
    expected: { 'app-migrate': ['delete', 'failed;'] }
  },
  {
    name: 'Job of another release, or of the same release in another namespace → out of scope',
    inputs: { release: 'app' },
    jobs: [{ name: 'other-migrate', release: 'other' }, { name: 'app-migrate', release: 'app', releaseNamespace: 'staging' }, { name: 'unowned' }],
    expected: {}
  },
  {
    name: 'Helm hook Job → keep, naming the annotation',
    inputs: { release: 'app' },
    jobs: [{ name: 'app-hook', release: 'app', hook: 'pre-upgrade' }],
    expected: { 'app-hook': ['keep', 'hook Job (helm.sh/hook: pre-upgrade)'] }
  },
  {
    name: 'Argo CD hook Job → keep',
    inputs: { release: 'app' },
    jobs: [{ name: 'app-sync', release: 'app', argoHook: 'PreSync' }],
    expected: { 'app-sync': ['keep', 'argocd.argoproj.io/hook: PreSync'] }
  },
  {
    name: 'Helm hook Job with include-hooks → delete',
    inputs: { release: 'app', 'include-hooks': 'true' },
    jobs: [{ name: 'app-hook', release: 'app', hook: 'pre-upgrade' }],
    expected: { 'app-hook': ['delete', 'succeeded'] }
  },
  {
    name: 'running Job, on-running wait (default) → wait, saying for how long it ran',
    inputs: { release: 'app' },
    jobs: [{ name: 'app-migrate', release: 'app', status: 'running', age: 180 }],
    expected: { 'app-migrate': ['wait', 'running for 3m; waiting for it to finish, then deleting it'] }
  },
  {
    name: 'running Job, on-running delete → delete',
    inputs: { release: 'app', 'on-running': 'delete' },
    jobs: [{ name: 'app-migrate', release: 'app', status: 'running', age: 30 }],
    expected: { 'app-migrate': ['delete', 'running for 30s; deleting it anyway, its logs so far saved (on-running: delete'] }
  },
  {
    name: 'running Job, on-running fail → block',
    inputs: { release: 'app', 'on-running': 'fail' },
    jobs: [{ name: 'app-migrate', release: 'app', status: 'running', age: 3700 }],
    expected: { 'app-migrate': ['block', 'running for 1h1m40s and on-running is fail'] }
  },
  {
    name: 'Job already being deleted → delete (wait until gone)',
    inputs: { release: 'app' },
    jobs: [{ name: 'app-migrate', release: 'app', status: 'terminating' }],
    expected: { 'app-migrate': ['delete', 'already being deleted'] }
  },
  {
    name: 'jobs input → only the named Jobs',
    inputs: { jobs: 'db-migrate, seed\nreindex' },
    jobs: [{ name: 'db-migrate' }, { name: 'reindex', status: 'failed' }, { name: 'nightly-backup' }],
    expected: { 'db-migrate': ['delete', 'succeeded'], reindex: ['delete', 'failed'] }
  },
  {
    name: 'release and jobs combine: a Job must match both',
    inputs: { release: 'app', jobs: 'app-migrate' },
    jobs: [{ name: 'app-migrate', release: 'app' }, { name: 'app-seed', release: 'app' }, { name: 'app-migrate-2' }],
    expected: { 'app-migrate': ['delete', 'succeeded'] }
  },
  {
    name: 'manifest: changed template → delete with the template’s changes; unchanged → keep; not rendered → out of scope',
    inputs: { manifest: 'rendered.yaml' },
    jobs: [{ name: 'app-migrate' }, { name: 'app-seed' }, { name: 'legacy' }],
    manifest: { 'app-migrate': { kind: 'differs', detail: 'containers[migrate].image: ledger:1.1 → 1.2' }, 'app-seed': undefined },
    expected: {
      'app-migrate': ['delete', 'differs from the rendered manifest: containers[migrate].image: ledger:1.1 → 1.2'],
      'app-seed': ['keep', 'unchanged — the upgrade will not touch it']
    }
  },
  {
    name: 'manifest: the upgrade’s apply would conflict → delete, naming the conflict',
    inputs: { manifest: 'rendered.yaml' },
    jobs: [{ name: 'app-migrate' }],
    manifest: { 'app-migrate': { kind: 'conflict', detail: 'conflict with "kubectl-edit": .spec.backoffLimit' } },
    expected: { 'app-migrate': ['delete', 'helm upgrade would fail on a field-manager conflict: conflict with "kubectl-edit": .spec.backoffLimit'] }
  },
  {
    name: 'manifest: could not compare (403) → treated as changed, as release scope would; running → wait',
    inputs: { manifest: 'rendered.yaml' },
    jobs: [{ name: 'app-migrate' }, { name: 'app-seed', status: 'running' }],
    manifest: { 'app-migrate': { kind: 'unknown', detail: '403 Forbidden' }, 'app-seed': { kind: 'unknown', detail: '403 Forbidden' } },
    expected: {
      'app-migrate': ['delete', 'could not compare it with the rendered manifest (403 Forbidden): treated as changed, as release scope would'],
      'app-seed': ['wait', 'waiting for it to finish, then deleting it (could not compare']
    }
  },
  {
    name: 'pending pod 2m old, unschedulable → stuck, delete (on-running: wait does not wait for it)',
    inputs: { release: 'app', 'stuck-after': '1m' },
    jobs: [{ name: 'app-migrate', release: 'app', status: 'running', age: 120 }],
    pods: { 'app-migrate': [unschedulable(120)] },
    expected: {
      'app-migrate': [
        'delete',
        "never started: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector; nothing ran, so nothing is interrupted: deleted (a Job’s pod template is immutable"
      ]
    }
  },
  {
    name: 'pending pod 10s old, unschedulable → running, wait (too early to tell)',
    inputs: { release: 'app', 'stuck-after': '1m' },
    jobs: [{ name: 'app-migrate', release: 'app', status: 'running', age: 10 }],
    pods: { 'app-migrate': [unschedulable(10)] },
    expected: { 'app-migrate': ['wait', 'running for 10s; waiting for it to finish'] }
  },
  {
    name: 'pending pod 2m old, unschedulable, stuck-after 5m → running, wait',
    inputs: { release: 'app', 'stuck-after': '5m' },
    jobs: [{ name: 'app-migrate', release: 'app', status: 'running', age: 120 }],
    pods: { 'app-migrate': [unschedulable(120)] },
    expected: { 'app-migrate': ['wait', 'running for 2m; waiting'] }
  },
  {
    name: 'ImagePullBackOff 3m old, on-running fail → stuck, delete (nothing runs to block on)',
    inputs: { release: 'app', 'on-running': 'fail' },
    jobs: [{ name: 'app-migrate', release: 'app', status: 'running', age: 180 }],
    pods: { 'app-migrate': [imagePullBackOff(180)] },
    expected: { 'app-migrate': ['delete', 'never started: ImagePullBackOff (registry.example/app:1.2.3); nothing ran'] }
  },
  {
    name: 'init container failed 4 times, main container never started → stuck, delete',
    inputs: { release: 'app' },
    jobs: [{ name: 'app-migrate', release: 'app', status: 'running', age: 600 }],
    pods: { 'app-migrate': [initCrashLoop(600, 4)] },
    expected: { 'app-migrate': ['delete', 'never started: init container wait-for-db failed 4 times'] }
  },
  {
    name: 'main container runs (the positive control) → running, the on-running rules: wait',
    inputs: { release: 'app' },
    jobs: [{ name: 'app-migrate', release: 'app', status: 'running', age: 600 }],
    pods: { 'app-migrate': [running(600)] },
    expected: { 'app-migrate': ['wait', 'running for 10m; waiting for it to finish, then deleting it'] }
  },
  {
    name: 'main container ran in an earlier pod, the newer one cannot pull its image → running, on-running fail: block',
    inputs: { release: 'app', 'on-running': 'fail' },
    jobs: [{ name: 'app-migrate', release: 'app', status: 'running', age: 600 }],
    pods: { 'app-migrate': [running(600), imagePullBackOff(300)] },
    expected: { 'app-migrate': ['block', 'running for 10m and on-running is fail'] }
  },
  {
    name: 'manifest: unchanged running Job → keep (no need to wait)',
    inputs: { manifest: 'rendered.yaml', 'on-running': 'fail' },
    jobs: [{ name: 'app-migrate', status: 'running' }],
    manifest: { 'app-migrate': undefined },
    expected: { 'app-migrate': ['keep', 'unchanged'] }
  }
]

test.each(cases)('$name', ({ inputs, jobs, manifest, pods, expected }) => {
  const parsed = settings({ namespace: 'prod', ...inputs })
  const observed: Observed = {
    namespace: 'prod',
    jobs: jobs.map(newJob).map((job) => {
      const of = pods?.[job.metadata?.name ?? '']
      return of ? { ...job, neverStarted: neverStarted(job, of, NOW, parsed.stuckAfterSeconds) } : job
    }),
    manifest: manifest ? new Map(Object.entries(manifest)) : undefined
  }
  const plan = planPrune(observed, parsed, NOW)
  const actual = Object.fromEntries(plan.jobs.map((p) => [p.name, p.action]))
  expect(actual).toEqual(Object.fromEntries(Object.entries(expected).map(([name, [action]]) => [name, action])))
  for (const p of plan.jobs) expect(p.reason).toContain(expected[p.name][1])
})

test('the plan reports each Job’s age at the given clock', () => {
  const plan = planPrune({ namespace: 'prod', jobs: [newJob({ name: 'a', release: 'app', age: 7200 })] }, settings({ release: 'app' }), NOW)
  expect(plan.jobs[0].ageSeconds).toBe(7200)
})

test.each([
  ['failed', 'failed', true],
  ['failed', 'succeeded', false],
  ['failed', 'running', true], // deleted while running: interrupted, its logs so far are saved
  ['failed', 'suspended', true], // its pods that ran before it was suspended may have failed
  ['none', 'suspended', false],
  ['failed', 'stuck', true], // as a failed Job's: init containers that failed have logs
  ['failed', 'terminating', false], // someone else's delete: not ours to act on
  ['all', 'succeeded', true],
  ['none', 'failed', false]
] as const)('harvest-logs %s, Job %s → harvest %s', (harvest, status, expected) => {
  expect(shouldHarvest(harvest, status)).toBe(expected)
})

describe('Jobs that are not simply running', () => {
  const suspended = (): V1Job =>
    ({ ...newJob({ name: 'app-migrate', release: 'app', status: 'running' }), status: {}, spec: { suspend: true, template: {} } }) as V1Job
  test('suspended Job with no pod (a queue holds it) → deleted without waiting, on-running wait or not', () => {
    for (const onRunning of ['wait', 'fail', 'delete']) {
      const plan = planPrune({ namespace: 'prod', jobs: [suspended()] }, settings({ release: 'app', 'on-running': onRunning }), NOW)
      expect(plan.jobs.map((p) => [p.status, p.action, p.harvest])).toEqual([['suspended', 'delete', true]])
      expect(plan.jobs[0].reason).toContain('suspended with no pod running: deleted without waiting')
    }
  })
  test('Job run by another controller (spec.managedBy), not finished → kept, never waited for', () => {
    const job = newJob({ name: 'app-migrate', release: 'app', status: 'running' })
    job.spec = { ...job.spec, managedBy: 'kueue.x-k8s.io/multikueue' } as V1Job['spec']
    const plan = planPrune({ namespace: 'prod', jobs: [job] }, settings({ release: 'app' }), NOW)
    expect(plan.jobs.map((p) => [p.status, p.action])).toEqual([['external', 'keep']])
    expect(plan.jobs[0].reason).toContain('managed by kueue.x-k8s.io/multikueue')
  })
  test('SuccessCriteriaMet / FailureTarget are interim: the Job still counts as running', () => {
    for (const type of ['SuccessCriteriaMet', 'FailureTarget']) {
      const job = newJob({ name: 'app-migrate', release: 'app', status: 'running' })
      job.status = { conditions: [{ type, status: 'True' }], active: 0 }
      const plan = planPrune({ namespace: 'prod', jobs: [job] }, settings({ release: 'app' }), NOW)
      expect(plan.jobs.map((p) => [p.status, p.action])).toEqual([['running', 'wait']])
    }
  })
  test('a finished Job is deleted in the background; a running one (on-running: delete) in the foreground', () => {
    const plan = planPrune(
      { namespace: 'prod', jobs: [newJob({ name: 'done', release: 'app' }), newJob({ name: 'busy', release: 'app', status: 'running' })] },
      settings({ release: 'app', 'on-running': 'delete' }),
      NOW
    )
    expect(plan.jobs.map((p) => [p.name, p.propagation])).toEqual([
      ['busy', 'Foreground'],
      ['done', 'Background']
    ])
  })
  test('re-deciding a fresh copy gives the same decision as the plan', () => {
    const plan = planPrune({ namespace: 'prod', jobs: [newJob({ name: 'app-migrate', release: 'app' })] }, settings({ release: 'app' }), NOW)
    const fresh = newJob({ name: 'app-migrate', release: 'app', hook: 'pre-upgrade' })
    expect(plan.redecide(newJob({ name: 'app-migrate', release: 'app' }), NOW)?.action).toBe('delete')
    expect(plan.redecide(fresh, NOW)?.action).toBe('keep')
    // Out of scope by now: kept, saying which part of the scope it left.
    const other = plan.redecide(newJob({ name: 'app-migrate', release: 'other' }), NOW)
    expect([other.action, other.reason]).toEqual(['keep', 'no longer in scope: not annotated as of release app'])
  })
  test('re-deciding applies the selector too: a fresh copy relabelled out of it is kept, one still matching is deleted', () => {
    const selector = 'app.kubernetes.io/component=migrate,!job-sweeper.test/keep'
    const matching = { 'app.kubernetes.io/component': 'migrate' }
    const plan = planPrune({ namespace: 'prod', jobs: [newJob({ name: 'migrate', labels: matching })] }, settings({ selector }), NOW)
    expect(plan.jobs.map((p) => p.action)).toEqual(['delete'])
    expect(plan.redecide(newJob({ name: 'migrate', labels: matching }), NOW).action).toBe('delete')
    const relabelled: Record<string, string>[] = [{ ...matching, 'job-sweeper.test/keep': 'inspect' }, { 'app.kubernetes.io/component': 'debug' }, {}]
    for (const labels of relabelled) {
      const again = plan.redecide(newJob({ name: 'migrate', labels }), NOW)
      expect([again.action, again.reason]).toEqual(['keep', `no longer in scope: its labels no longer match selector '${selector}'`])
    }
  })
  test('the plan itself applies the selector to what was listed', () => {
    const jobs = [newJob({ name: 'in', labels: { tier: 'db' } }), newJob({ name: 'out', labels: { tier: 'web' } })]
    const plan = planPrune({ namespace: 'prod', jobs }, settings({ selector: 'tier in (db,cache)' }), NOW)
    expect(plan.jobs.map((p) => p.name)).toEqual(['in'])
  })
})
