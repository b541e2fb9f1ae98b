// The planner's narrow policy, and the decisions that moved into plan/ from the executor: the
// error of a blocked plan, fail-on-job-failure, and the final reason of a Job after a wait (redecide).
import { toJobRecord } from '../../src/kube/job-record.ts'
import { planPrune } from '../../src/plan/plan.ts'
import { planPolicy } from '../../src/plan/policy.ts'
import { planPost } from '../../src/plan/retention.ts'
import { settingsOf } from '../fake/executor.ts'
import { NOW, newJob } from './jobs.ts'

const at = (job: ReturnType<typeof newJob>) => ({ namespace: 'prod', jobs: [toJobRecord(job)] })
const later = new Date(NOW.getTime() + 120_000)

test('planPolicy: the decisions’ settings only, not the kubeconfig, the logs-dir, the concurrency or the timeouts', () => {
  const settings = settingsOf({ release: 'app', ttl: '2h', 'keep-last': '3', 'logs-dir': '/tmp/logs', context: 'prod-ctx', concurrency: '4' })
  expect(planPolicy(settings)).toEqual({
    scope: { release: 'app', selector: undefined, jobs: undefined },
    includeHooks: false,
    onRunning: 'wait',
    harvestLogs: 'failed',
    ttlSeconds: 7200,
    failureGraceSeconds: 86400,
    waitForJobsSeconds: 0,
    failOnJobFailure: true,
    keepLast: 3,
    groupBy: undefined
  })
})

test('pre, on-running fail: the plan blocks, and its problem is the error the step fails with', () => {
  const policy = planPolicy(settingsOf({ release: 'app', 'on-running': 'fail' }))
  const [p] = planPrune(at(newJob({ name: 'app-migrate', release: 'app', status: 'running' })), policy, NOW).jobs
  expect(p.action).toBe('block')
  expect(p.problem).toEqual({
    severity: 'error',
    ofTheJob: true,
    message: 'Job prod/app-migrate is still running (10m) and on-running is fail; nothing was deleted'
  })
  // Positive control: on-running wait plans a wait, and no problem.
  const [waits] = planPrune(at(newJob({ name: 'app-migrate', release: 'app', status: 'running' })), planPolicy(settingsOf({ release: 'app' })), NOW).jobs
  expect([waits.action, waits.problem]).toEqual(['wait', undefined])
})

describe('post: fail-on-job-failure', () => {
  const failed = newJob({ name: 'app-migrate', release: 'app', status: 'failed', finishedAgo: 60 })
  test.each([
    [
      'wait-for-jobs, fail-on-job-failure → an error',
      { 'wait-for-jobs': '5m' },
      { severity: 'error', ofTheJob: true, message: 'Job prod/app-migrate failed; kept for failure-grace 1d so it can be inspected' }
    ],
    [
      'wait-for-jobs, fail-on-job-failure false → a warning',
      { 'wait-for-jobs': '5m', 'fail-on-job-failure': 'false' },
      { severity: 'warning', message: 'Job prod/app-migrate failed (fail-on-job-failure is false); kept for failure-grace 1d' }
    ],
    ['no wait-for-jobs → nothing: the phase promises nothing about failures', {}, undefined]
  ])('a Job already failed when post began, %s', (_, inputs, problem) => {
    const [p] = planPost(at(failed), planPolicy(settingsOf({ phase: 'post', release: 'app', ...inputs })), NOW).jobs
    expect(p.action).toBe('set-ttl')
    expect(p.problem).toEqual(problem)
  })

  test('a Job that never started, with wait-for-jobs: not waited for, and a failure as the policy says', () => {
    const stuck = { ...toJobRecord(newJob({ name: 'app-migrate', release: 'app', status: 'running' })), neverStarted: 'never started: ImagePullBackOff (x:1)' }
    const [p] = planPost({ namespace: 'prod', jobs: [stuck] }, planPolicy(settingsOf({ phase: 'post', release: 'app', 'wait-for-jobs': '5m' })), NOW).jobs
    expect(p.problem).toEqual({
      severity: 'error',
      ofTheJob: true,
      message: 'Job prod/app-migrate never started: ImagePullBackOff (x:1): not waited for; it keeps the upper-bound TTL'
    })
  })
})

describe('redecide after a wait gives the final reason', () => {
  const policy = planPolicy(settingsOf({ phase: 'post', release: 'app', 'wait-for-jobs': '10m' }))
  const running = newJob({ name: 'app-migrate', release: 'app', status: 'running' })
  const plan = planPost(at(running), policy, NOW)
  const finished = (status: 'succeeded' | 'failed') => toJobRecord(newJob({ name: 'app-migrate', release: 'app', status }))

  test.each([
    ['succeeded → its ttl, no problem', finished('succeeded'), 'set-ttl', 'succeeded after waiting; deleted ttl 1h after it finished', undefined],
    [
      'failed → its failure-grace, and the failure fails the step',
      finished('failed'),
      'set-ttl',
      'failed after waiting; deleted failure-grace 1d after it finished',
      { severity: 'error', ofTheJob: true, message: 'Job prod/app-migrate failed; kept for failure-grace 1d so it can be inspected' }
    ],
    [
      'never started → the upper bound it has, set again once its logs are saved, and a failure',
      { ...toJobRecord(running), neverStarted: 'never started: Unschedulable' },
      'set-ttl',
      'never started: Unschedulable; no longer waited for after 2m of wait-for-jobs 10m; it keeps the upper-bound TTL',
      {
        severity: 'error',
        ofTheJob: true,
        message: 'Job prod/app-migrate never started: Unschedulable: no longer waited for after 2m of wait-for-jobs 10m; it keeps the upper-bound TTL'
      }
    ],
    [
      'became a hook meanwhile → kept, saying so',
      toJobRecord(newJob({ name: 'app-migrate', release: 'app', hook: 'post-upgrade' })),
      'keep',
      'succeeded: hook Job (helm.sh/hook: post-upgrade): its own hook-delete-policy manages it; set include-hooks to include it',
      undefined
    ]
  ])('post: %s', (_, job, action, reason, problem) => {
    const again = plan.redecide(job, later, 120)
    expect([again.action, again.reason, again.problem]).toEqual([action, reason, problem])
  })

  test('post: a Job that turned out never to start has its logs saved (harvest-logs failed) and keeps the upper bound; harvest-logs none saves none', () => {
    const stuck = { ...toJobRecord(running), neverStarted: 'never started: Unschedulable' }
    const again = plan.redecide(stuck, later, 120)
    expect([again.harvest, again.ttlSeconds]).toEqual([true, 86400])
    const none = planPost(at(running), planPolicy(settingsOf({ phase: 'post', release: 'app', 'wait-for-jobs': '10m', 'harvest-logs': 'none' })), NOW)
    expect(none.redecide(stuck, later, 120).harvest).toBe(false)
  })

  test('post, ttl never: the reason says it is kept until removed', () => {
    const never = planPost(at(running), planPolicy(settingsOf({ phase: 'post', release: 'app', 'wait-for-jobs': '10m', ttl: 'never' })), NOW)
    expect(never.redecide(finished('succeeded'), later, 120).reason).toBe('succeeded after waiting; ttl is never: kept until removed')
  })

  test('positive control: without a wait, redecide gives the planner’s own reason', () => {
    expect(plan.redecide(finished('succeeded'), later).reason).toBe('succeeded 2m ago; deleted ttl 1h after it finished')
  })

  test('pre: a waited Job still to be deleted keeps its reason; one that changed says it changed while it was waited for', () => {
    const pre = planPrune(at(running), planPolicy(settingsOf({ release: 'app' })), NOW)
    expect(pre.redecide(finished('succeeded'), later, 120).reason).toBe('succeeded; a Job’s pod template is immutable, so helm upgrade fails while it exists')
    const hook = toJobRecord(newJob({ name: 'app-migrate', release: 'app', hook: 'pre-upgrade' }))
    expect(pre.redecide(hook, later, 120)).toEqual(
      expect.objectContaining({ action: 'keep', reason: expect.stringMatching(/^changed while it was waited for: hook Job \(helm\.sh\/hook: pre-upgrade\)/) })
    )
  })
})
