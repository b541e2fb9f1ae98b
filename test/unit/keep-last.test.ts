// keep-last, table-driven: which group a Job is in, and what sweep and post then decide.
import { baseName, groupOf } from '../../src/plan/keep-last.ts'
import type { Observed } from '../../src/observe/observed.ts'
import type { JobAction } from '../../src/plan/plan.ts'
import { planPost, planSweep } from '../../src/plan/retention.ts'
import { parseSettings, type Settings } from '../../src/settings/settings.ts'
import { NOW, newJob, type JobShape } from './jobs.ts'

const settings = (inputs: Record<string, string>): Settings => parseSettings((name) => ({ selector: '!x', namespace: 'prod', ...inputs })[name] ?? '', {})
const observed = (jobs: JobShape[]): Observed => ({ namespace: 'prod', jobs: jobs.map(newJob) })

test.each([
  ['migrate-42', 'migrate'],
  ['db-migrate-7f9c2', 'db-migrate'],
  ['seed-v3', 'seed'],
  ['report-28934567', 'report'],
  ['backup-xk2zq', 'backup'], // a generateName suffix: 5 characters, no vowels
  ['backup-bcdfg', 'backup'],
  ['deploy-abc123def', 'deploy'], // hex with a digit
  ['app-migrate', 'app-migrate'], // a word stays
  ['cache-warmup', 'cache-warmup'],
  ['backfill-cafe', 'backfill-cafe'], // hex letters but no digit: a word
  ['backup-s3', 'backup-s3'], // too short for a hash
  ['load-utf8data', 'load-utf8data'], // not hex, not 5 characters
  ['migrate-2-1', 'migrate-2'], // one segment only
  ['42', '42'],
  ['migrate', 'migrate']
])('base name of %s is %s', (name, base) => {
  expect(baseName(name)).toBe(base)
})

test.each([
  ['an owning CronJob wins over the release', { name: 'nightly-2893', cronJob: 'nightly', release: 'app' }, undefined, 'CronJob nightly'],
  ['a Helm release groups by the name without its revision', { name: 'app-migrate-7', release: 'app' }, 'team', 'app-migrate'],
  ['else the group-by label', { name: 'adhoc-1', labels: { team: 'payments' } }, 'team', 'team=payments'],
  ['no CronJob, release or group-by label: no group', { name: 'adhoc-1', labels: { other: 'x' } }, 'team', undefined]
] as [string, JobShape, string | undefined, string | undefined][])('%s', (_, shape, groupBy, label) => {
  expect(groupOf(newJob(shape), groupBy)?.label).toBe(label)
})

test('the same base name in two releases is two groups', () => {
  const a = groupOf(newJob({ name: 'migrate-1', release: 'a' }), undefined)
  const b = groupOf(newJob({ name: 'migrate-2', release: 'b' }), undefined)
  expect([a?.label, b?.label, a?.key === b?.key]).toEqual(['migrate', 'migrate', false])
})

interface Case {
  name: string
  inputs: Record<string, string>
  jobs: JobShape[]
  /** Job name → action and a fragment of the reason (post: and the TTL). */
  expected: Record<string, [JobAction, string, (number | null)?]>
}

// Revisions of a release's migration, newest last; each ran 10 minutes after the one before.
const revisions = (count: number, shape: Partial<JobShape> = {}): JobShape[] =>
  Array.from({ length: count }, (_, i) => ({ name: `migrate-${i + 1}`, release: 'app', age: (count - i) * 600, finishedAgo: (count - i) * 600 - 60, ...shape }))

const sweepCases: Case[] = [
  {
    name: 'keep-last 2, ttl expired for all → the 2 newest kept, the older swept by their ttl',
    inputs: { 'keep-last': '2', ttl: '1m' },
    jobs: revisions(4),
    expected: {
      'migrate-4': ['keep', 'one of the 2 newest of group migrate (keep-last 2)'],
      'migrate-3': ['keep', 'one of the 2 newest of group migrate (keep-last 2)'],
      'migrate-2': ['delete', 'older than the 2 newest of group migrate (keep-last 2); succeeded 29m ago; ttl 1m (the input) has expired'],
      'migrate-1': ['delete', 'older than the 2 newest of group migrate']
    }
  },
  {
    name: 'keep-last 1 with time left → older Jobs still kept by their ttl',
    inputs: { 'keep-last': '1', ttl: '1h' },
    jobs: revisions(2),
    expected: {
      'migrate-2': ['keep', 'the newest of group migrate (keep-last 1)'],
      'migrate-1': ['keep', 'older than the newest of group migrate (keep-last 1); succeeded 19m ago; ttl 1h (the input) has not expired']
    }
  },
  {
    name: 'a run of successes never pushes out the last failure: it is kept until its failure-grace',
    inputs: { 'keep-last': '1', ttl: '1m', 'failure-grace': '1d' },
    jobs: [...revisions(3), { name: 'migrate-0', release: 'app', status: 'failed', age: 3000, finishedAgo: 2900 }],
    expected: {
      'migrate-3': ['keep', 'the newest of group migrate'],
      'migrate-2': ['delete', 'older than the newest'],
      'migrate-1': ['delete', 'older than the newest'],
      'migrate-0': ['keep', 'the last failure of group migrate; failed 48m20s ago; failure-grace 1d (the input) has not expired']
    }
  },
  {
    name: 'the last failure is swept once its failure-grace expired; keep-last never keeps a failure longer',
    inputs: { 'keep-last': '3', 'failure-grace': '10m' },
    jobs: [{ name: 'migrate-9', release: 'app', status: 'failed', age: 1300, finishedAgo: 1200 }],
    expected: { 'migrate-9': ['delete', 'the last failure of group migrate; failed 20m ago; failure-grace 10m (the input) has expired'] }
  },
  {
    name: "a CronJob's Jobs are one group whatever their names; a running one takes no place",
    inputs: { 'keep-last': '1', ttl: '1m' },
    jobs: [
      { name: 'nightly-100', cronJob: 'nightly', age: 7200, finishedAgo: 7100 },
      { name: 'nightly-200', cronJob: 'nightly', age: 3600, finishedAgo: 3500 },
      { name: 'nightly-300', cronJob: 'nightly', status: 'running', age: 60 }
    ],
    expected: {
      'nightly-300': ['keep', 'still running: not finished'],
      'nightly-200': ['keep', 'the newest of group CronJob nightly (keep-last 1)'],
      'nightly-100': ['delete', 'older than the newest of group CronJob nightly']
    }
  },
  {
    name: 'group-by groups the Jobs no CronJob or release groups; one without the label has its ttl alone',
    inputs: { 'keep-last': '1', 'group-by': 'team', ttl: '1m' },
    jobs: [
      { name: 'report-a', labels: { team: 'payments' }, age: 900, finishedAgo: 800 },
      { name: 'report-b', labels: { team: 'payments' }, age: 600, finishedAgo: 500 },
      { name: 'loner', age: 600, finishedAgo: 500 }
    ],
    expected: {
      'report-b': ['keep', 'the newest of group team=payments (keep-last 1)'],
      'report-a': ['delete', 'older than the newest of group team=payments'],
      loner: ['delete', 'succeeded 8m20s ago; ttl 1m (the input) has expired']
    }
  },
  {
    name: 'a hook Job is kept as always and takes no place among the newest',
    inputs: { 'keep-last': '1', ttl: '1m' },
    jobs: [...revisions(2), { name: 'migrate-hook-3', release: 'app', hook: 'post-upgrade', age: 10, finishedAgo: 5 }],
    expected: {
      'migrate-hook-3': ['keep', 'hook Job'],
      'migrate-2': ['keep', 'the newest of group migrate'],
      'migrate-1': ['delete', 'older than the newest']
    }
  },
  {
    name: 'keep-last 0 (off) → retention alone',
    inputs: { 'keep-last': '0', ttl: '1m' },
    jobs: revisions(2),
    expected: { 'migrate-2': ['delete', 'succeeded 9m ago; ttl 1m'], 'migrate-1': ['delete', 'succeeded 19m ago; ttl 1m'] }
  }
]

test.each(sweepCases)('sweep: $name', ({ inputs, jobs, expected }) => {
  const plan = planSweep(observed(jobs), settings({ phase: 'sweep', ...inputs }), NOW)
  const got = Object.fromEntries(plan.jobs.map((p) => [p.name, [p.action, p.reason]]))
  for (const [name, [action, reason]] of Object.entries(expected)) {
    expect([name, got[name]?.[0]]).toEqual([name, action])
    expect(got[name]?.[1]).toContain(reason)
  }
  expect(Object.keys(got).sort()).toEqual(Object.keys(expected).sort())
})

const postCases: Case[] = [
  {
    name: 'the 2 newest get no TTL (the TTL controller would delete them whatever the count); older ones get their ttl',
    inputs: { 'keep-last': '2', ttl: '5m' },
    jobs: revisions(3),
    expected: {
      'migrate-3': ['set-ttl', 'one of the 2 newest of group migrate (keep-last 2): no TTL; ttl 5m applies once it is older', null],
      'migrate-2': ['set-ttl', 'one of the 2 newest', null],
      'migrate-1': ['set-ttl', 'older than the 2 newest of group migrate (keep-last 2); succeeded 29m ago; deleted ttl 5m after it finished', 300]
    }
  },
  {
    name: 'the new revision still running counts among the newest and gets no TTL',
    inputs: { 'keep-last': '1', ttl: '5m', 'failure-grace': '1d' },
    jobs: [...revisions(1), { name: 'migrate-2', release: 'app', status: 'running', age: 30 }],
    expected: {
      'migrate-2': ['set-ttl', 'the newest of group migrate (keep-last 1): no TTL', null],
      'migrate-1': ['set-ttl', 'older than the newest of group migrate', 300]
    }
  },
  {
    name: 'failures are counted apart: the last failure gets its failure-grace, and takes no place among the newest',
    inputs: { 'keep-last': '1', ttl: '5m', 'failure-grace': '1d' },
    jobs: [...revisions(1), { name: 'migrate-2', release: 'app', status: 'failed', age: 30, finishedAgo: 10 }],
    expected: {
      'migrate-2': ['set-ttl', 'the last failure of group migrate; failed 10s ago; deleted failure-grace 1d after it finished', 86400],
      'migrate-1': ['set-ttl', 'the newest of group migrate (keep-last 1): no TTL', null]
    }
  }
]

test.each(postCases)('post: $name', ({ inputs, jobs, expected }) => {
  const plan = planPost(observed(jobs), settings({ phase: 'post', ...inputs }), NOW)
  const got = Object.fromEntries(plan.jobs.map((p) => [p.name, [p.action, p.reason, p.ttlSeconds]]))
  for (const [name, [action, reason, ttl]] of Object.entries(expected)) {
    expect([name, got[name]?.[0], got[name]?.[2]]).toEqual([name, action, ttl])
    expect(got[name]?.[1]).toContain(reason)
  }
})

test('post with wait-for-jobs: the running newest is waited for, then decided again on its fresh copy', () => {
  const jobs = [...revisions(1), { name: 'migrate-2', release: 'app', status: 'running' as const, age: 30 }]
  const plan = planPost(observed(jobs), settings({ phase: 'post', 'keep-last': '1', ttl: '5m', 'wait-for-jobs': '5m' }), NOW)
  const running = plan.jobs.find((p) => p.name === 'migrate-2')
  // No TTL while it runs (not the upper bound, which a wait that times out would leave on a Job keep-last keeps).
  expect([running?.action, running?.ttlSeconds, running?.keptByCount, running?.retention]).toEqual(['wait', null, true, 'none while among the newest'])
  expect(running?.reason).toBe(
    'the newest of group migrate (keep-last 1): no TTL while it runs; waiting up to 5m for its outcome (a failure gets failure-grace 1d)'
  )
  const succeeded = plan.redecide(newJob({ name: 'migrate-2', release: 'app', age: 40, finishedAgo: 1 }), NOW)
  expect([succeeded?.action, succeeded?.ttlSeconds, succeeded?.keptByCount]).toEqual(['set-ttl', null, true])
  const failed = plan.redecide(newJob({ name: 'migrate-2', release: 'app', status: 'failed', age: 40, finishedAgo: 1 }), NOW)
  expect([failed?.ttlSeconds, failed?.reason]).toEqual([86400, expect.stringContaining('the last failure of group migrate')])
})
