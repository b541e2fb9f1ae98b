// Retention by outcome, table-driven: what post sets and what sweep deletes.
import { ALL_NAMESPACES } from '../../src/observe/observed.ts'
import { planPost, planSweep } from '../../src/plan/retention.ts'
import type { JobAction } from '../../src/plan/plan.ts'
import { parseSettings, type Settings } from '../../src/settings/settings.ts'
import { NOW, newJob, type JobShape } from './jobs.ts'

const settings = (inputs: Record<string, string>): Settings => parseSettings((name) => ({ selector: '!x', namespace: 'prod', ...inputs })[name] ?? '', {})

interface PostCase {
  name: string
  inputs: Record<string, string>
  job: JobShape
  action: JobAction
  ttl: number | null | undefined
  reason: string
  retention?: string
}

const postCases: PostCase[] = [
  {
    name: 'succeeded Job → ttl',
    inputs: {},
    job: { name: 'j', finishedAgo: 1200 },
    action: 'set-ttl',
    ttl: 3600,
    reason: 'succeeded 20m ago; deleted ttl 1h after it finished',
    retention: '1h (40m left)'
  },
  {
    name: 'failed Job → failure-grace',
    inputs: {},
    job: { name: 'j', status: 'failed', finishedAgo: 60 },
    action: 'set-ttl',
    ttl: 86400,
    reason: 'failed 1m ago; deleted failure-grace 1d after it finished',
    retention: '1d (23h59m left)'
  },
  {
    name: 'succeeded Job, ttl never → TTL removed',
    inputs: { ttl: 'never' },
    job: { name: 'j' },
    action: 'set-ttl',
    ttl: null,
    reason: 'ttl is never: kept until removed',
    retention: 'never'
  },
  {
    name: 'failed 2d ago, grace 1d → TTL 1d (the TTL controller deletes it at once)',
    inputs: { 'failure-grace': '1d' },
    job: { name: 'j', status: 'failed', finishedAgo: 172800 },
    action: 'set-ttl',
    ttl: 86400,
    reason: 'failed 2d ago',
    retention: '1d (expired 1d ago)'
  },
  {
    name: 'running Job → the larger retention as upper bound',
    inputs: { ttl: '2h', 'failure-grace': '30m' },
    job: { name: 'j', status: 'running' },
    action: 'set-ttl',
    ttl: 7200,
    reason: 'running; TTL 2h (the larger of ttl and failure-grace) until it finishes'
  },
  {
    name: 'running Job, failure-grace never → no upper bound',
    inputs: { 'failure-grace': 'never' },
    job: { name: 'j', status: 'running' },
    action: 'set-ttl',
    ttl: null,
    reason: 'running; TTL never'
  },
  {
    name: 'running Job with wait-for-jobs → wait',
    inputs: { 'wait-for-jobs': '5m' },
    job: { name: 'j', status: 'running' },
    action: 'wait',
    ttl: 86400,
    reason: 'waiting up to 5m to set the one for its outcome'
  },
  {
    name: 'hook Job → keep',
    inputs: {},
    job: { name: 'j', hook: 'post-install' },
    action: 'keep',
    ttl: undefined,
    reason: 'hook Job (helm.sh/hook: post-install)'
  },
  { name: 'Job being deleted → keep', inputs: {}, job: { name: 'j', status: 'terminating' }, action: 'keep', ttl: undefined, reason: 'being deleted' },
  {
    name: 'annotations of an earlier run do not override this run’s settings',
    inputs: { ttl: '5m' },
    job: { name: 'j', annotations: { 'job-sweeper.io/ttl': '7d' } },
    action: 'set-ttl',
    ttl: 300,
    reason: 'deleted ttl 5m after it finished'
  }
]

test.each(postCases)('post: $name', ({ inputs, job, action, ttl, reason, retention }) => {
  const [planned] = planPost({ namespace: 'prod', jobs: [newJob(job)] }, settings(inputs), NOW).jobs
  expect([planned.action, planned.ttlSeconds]).toEqual([action, ttl])
  expect(planned.reason).toContain(reason)
  if (retention) expect(planned.retention).toBe(retention)
})

interface SweepCase {
  name: string
  inputs: Record<string, string>
  job: JobShape
  action: JobAction
  reason: string
}

const sweepCases: SweepCase[] = [
  {
    name: 'succeeded 2h ago, ttl 1h (input) → delete',
    inputs: {},
    job: { name: 'j', finishedAgo: 7200 },
    action: 'delete',
    reason: 'succeeded 2h ago; ttl 1h (the input) has expired'
  },
  { name: 'succeeded 20m ago, ttl 1h → keep, 40m left', inputs: {}, job: { name: 'j', finishedAgo: 1200 }, action: 'keep', reason: 'has not expired' },
  {
    name: 'failed 2h ago, grace 24h → keep',
    inputs: {},
    job: { name: 'j', status: 'failed', finishedAgo: 7200 },
    action: 'keep',
    reason: 'failed 2h ago; failure-grace 1d (the input) has not expired'
  },
  { name: 'failed 2d ago, grace 24h → delete', inputs: {}, job: { name: 'j', status: 'failed', finishedAgo: 172800 }, action: 'delete', reason: 'has expired' },
  {
    name: 'annotation wins over the input: succeeded 2h ago, annotated ttl 7d → keep',
    inputs: { ttl: '1h' },
    job: { name: 'j', finishedAgo: 7200, annotations: { 'job-sweeper.io/ttl': '7d' } },
    action: 'keep',
    reason: 'ttl 7d (its annotation) has not expired'
  },
  {
    name: 'annotated never → keep',
    inputs: {},
    job: { name: 'j', finishedAgo: 9999999, annotations: { 'job-sweeper.io/ttl': 'never' } },
    action: 'keep',
    reason: 'ttl is never (its annotation)'
  },
  { name: 'running → keep', inputs: {}, job: { name: 'j', status: 'running', age: 999999 }, action: 'keep', reason: 'still running' },
  { name: 'hook Job → keep', inputs: {}, job: { name: 'j', hook: 'pre-upgrade', finishedAgo: 999999 }, action: 'keep', reason: 'hook Job' },
  {
    name: 'hook Job with include-hooks, expired → delete',
    inputs: { 'include-hooks': 'true' },
    job: { name: 'j', hook: 'pre-upgrade', finishedAgo: 999999 },
    action: 'delete',
    reason: 'has expired'
  }
]

test.each(sweepCases)('sweep: $name', ({ inputs, job, action, reason }) => {
  const [planned] = planSweep({ namespace: 'prod', jobs: [newJob(job)] }, settings({ phase: 'sweep', ...inputs }), NOW).jobs
  expect(planned.action).toBe(action)
  expect(planned.reason).toContain(reason)
})

test('post: a new Job that never started (stuck), wait-for-jobs 10m → the upper bound, not waited for, saying why', () => {
  const job = { ...newJob({ name: 'j', status: 'running' }), neverStarted: 'never started: ImagePullBackOff (registry.example/app:1.2.3)' }
  const [planned] = planPost({ namespace: 'prod', jobs: [job] }, settings({ 'wait-for-jobs': '10m' }), NOW).jobs
  expect([planned.status, planned.action, planned.ttlSeconds]).toEqual(['stuck', 'set-ttl', 86400])
  expect(planned.reason).toBe('never started: ImagePullBackOff (registry.example/app:1.2.3); TTL 1d (the larger of ttl and failure-grace) until it finishes')
  // The positive control: the same Job running is waited for.
  const [waited] = planPost({ namespace: 'prod', jobs: [{ ...job, neverStarted: undefined }] }, settings({ 'wait-for-jobs': '10m' }), NOW).jobs
  expect([waited.status, waited.action]).toEqual(['running', 'wait'])
})

test('sweep: a Job that never started is kept as every unfinished Job (sweep reads no pods)', () => {
  const job = { ...newJob({ name: 'j', status: 'running', age: 86400 * 30 }), neverStarted: 'never started: x' }
  const [planned] = planSweep({ namespace: 'prod', jobs: [job] }, settings({}), NOW).jobs
  expect([planned.action, planned.reason]).toEqual(['keep', 'stuck: not finished'])
})

test('sweep: the release scope checks each Job against its own namespace', () => {
  const jobs = [newJob({ name: 'a', release: 'app', releaseNamespace: 'prod', finishedAgo: 999999 })]
  jobs[0].metadata!.namespace = 'staging'
  const plan = planSweep({ namespace: ALL_NAMESPACES, jobs }, settings({ phase: 'sweep', release: 'app' }), NOW)
  expect(plan.jobs).toEqual([])
})

describe('ownership and annotations', () => {
  test('post: a TTL the chart server-side applies (Helm 4) is left as the chart sets it, and the reason says so', () => {
    const job = { ...newJob({ name: 'j', finishedAgo: 60 }), ttlAppliedBy: ['helm'] }
    job.spec = { ...job.spec, ttlSecondsAfterFinished: 86400 } as typeof job.spec
    const [p] = planPost({ namespace: 'prod', jobs: [job] }, settings({ ttl: '1h' }), NOW).jobs
    expect([p.action, p.chartTtl, p.retention]).toEqual(['set-ttl', true, "1d (the chart's)"])
    expect(p.reason).toContain('the chart sets ttlSecondsAfterFinished 86400 (applied by helm): the chart’s value stands'.replace('’', "'"))
  })
  test('post: without an applying owner the TTL is taken over (positive control)', () => {
    const [p] = planPost({ namespace: 'prod', jobs: [newJob({ name: 'j', finishedAgo: 60 })] }, settings({ ttl: '1h' }), NOW).jobs
    expect([p.action, p.chartTtl, p.ttlSeconds]).toEqual(['set-ttl', undefined, 3600])
  })
  test.each([
    ['Never', 'keep', 'ttl is never (its annotation)'],
    ['3 days', 'delete', "ttl 1h (the input: its annotation job-sweeper.io/ttl '3 days' is not a duration) has expired"],
    ['30d', 'keep', 'ttl 30d (its annotation) has not expired']
  ])("sweep: annotation ttl '%s' → %s", (value, action, reason) => {
    const job = newJob({ name: 'j', finishedAgo: 7200, annotations: { 'job-sweeper.io/ttl': value } })
    const [p] = planSweep({ namespace: 'prod', jobs: [job] }, settings({ phase: 'sweep', ttl: '1h' }), NOW).jobs
    expect([p.action, p.reason]).toEqual([action, expect.stringContaining(reason)])
  })
})
