// Retention by outcome — a short ttl for succeeded Jobs, a longer failure-grace for failed ones —
// for the post phase (which sets it on new Jobs) and the sweep phase (which enforces it). Pure.
import type { V1Job } from '@kubernetes/client-node'
import { formatDuration } from '../settings/duration.ts'
import { parseDuration } from '../settings/duration.ts'
import type { Settings } from '../settings/settings.ts'
import { byName, jobsInScope, plannedJob, type Observed, type PlannedJob } from './plan.ts'
import { finishedAt, jobStatus } from './predicates.ts'

/** The project's annotation/label prefix: job-sweeper.io/. */
export const ANNOTATION = {
  ttl: 'job-sweeper.io/ttl',
  failureGrace: 'job-sweeper.io/failure-grace',
  runUrl: 'job-sweeper.io/run-url',
  commit: 'job-sweeper.io/commit'
} as const
/** Label on every Job the post phase gave a retention, so sweeps can select them. */
export const MANAGED_LABEL = 'job-sweeper.io/managed'

/** A retention in seconds, or null for never. */
export type Retention = number | null

export const formatRetention = (r: Retention): string => (r === null ? 'never' : formatDuration(r))

function annotated(job: V1Job, key: string): Retention | undefined {
  const value = job.metadata?.annotations?.[key]?.trim()
  if (value === undefined) return undefined
  if (value === 'never') return null
  return parseDuration(value)
}

/** The retention the settings give an outcome: ttl for succeeded, failure-grace for failed. */
export function retentionOf(outcome: 'succeeded' | 'failed', settings: Settings): Retention {
  return outcome === 'succeeded' ? settings.ttlSeconds : settings.failureGraceSeconds
}

/** Sweep: the retention recorded on the Job (job-sweeper.io/ annotations), else the settings'. */
export function recordedRetention(job: V1Job, outcome: 'succeeded' | 'failed', settings: Settings): Retention {
  const fromAnnotation = annotated(job, outcome === 'succeeded' ? ANNOTATION.ttl : ANNOTATION.failureGrace)
  return fromAnnotation !== undefined ? fromAnnotation : retentionOf(outcome, settings)
}

/** The upper bound for a Job still running: the larger of the two retentions (never wins). */
export function upperBound(settings: Settings): Retention {
  if (settings.ttlSeconds === null || settings.failureGraceSeconds === null) return null
  return Math.max(settings.ttlSeconds, settings.failureGraceSeconds)
}

/** "1h (40m left)", "1h (expired 5m ago)", "never". */
export function describeRetention(retention: Retention, finishedSecondsAgo: number | undefined): string {
  if (retention === null) return 'never'
  if (finishedSecondsAgo === undefined) return `${formatDuration(retention)} after it finishes`
  const left = retention - finishedSecondsAgo
  return left > 0 ? `${formatDuration(retention)} (${formatDuration(left)} left)` : `${formatDuration(retention)} (expired ${formatDuration(-left)} ago)`
}

export interface RetentionPlan {
  namespace: string
  jobs: PlannedJob[]
}

/** Post: every Job in scope gets its retention as ttlSecondsAfterFinished. */
export function planPost(observed: Observed, settings: Settings, now: Date): RetentionPlan {
  const { candidates, hooks } = jobsInScope(observed, settings, now)
  const jobs = candidates.map((job) => {
    const status = jobStatus(job)
    const base = plannedJob(job, observed, now, { action: 'keep', reason: '' })
    if (status === 'terminating') return { ...base, reason: 'being deleted' }
    if (status === 'running') {
      const bound = upperBound(settings)
      const waiting = settings.waitForJobsSeconds > 0
      const reason = `running; TTL ${formatRetention(bound)} (the larger of ttl and failure-grace) until it finishes${waiting ? `; waiting up to ${formatDuration(settings.waitForJobsSeconds)} to set the one for its outcome` : ''}`
      return { ...base, action: waiting ? ('wait' as const) : ('set-ttl' as const), ttlSeconds: bound, reason, retention: describeRetention(bound, undefined) }
    }
    const retention = retentionOf(status, settings)
    const which = status === 'succeeded' ? 'ttl' : 'failure-grace'
    const ago = base.finishedSecondsAgo === undefined ? '' : ` ${formatDuration(base.finishedSecondsAgo)} ago`
    const reason =
      retention === null
        ? `${status}${ago}; ${which} is never: kept until removed`
        : `${status}${ago}; deleted ${which} ${formatDuration(retention)} after it finished`
    return { ...base, action: 'set-ttl' as const, ttlSeconds: retention, reason, retention: describeRetention(retention, base.finishedSecondsAgo) }
  })
  return { namespace: observed.namespace, jobs: [...jobs, ...hooks].sort(byName) }
}

/** Sweep: delete the finished Jobs whose retention has expired; keep the rest, saying how long is left. */
export function planSweep(observed: Observed, settings: Settings, now: Date): RetentionPlan {
  const { candidates, hooks } = jobsInScope(observed, settings, now)
  const jobs = candidates.map((job) => {
    const status = jobStatus(job)
    const base = plannedJob(job, observed, now, { action: 'keep', reason: '' })
    if (status === 'terminating') return { ...base, reason: 'already being deleted' }
    if (status === 'running') return { ...base, reason: 'still running' }
    const retention = recordedRetention(job, status, settings)
    const which = status === 'succeeded' ? 'ttl' : 'failure-grace'
    const source = job.metadata?.annotations?.[status === 'succeeded' ? ANNOTATION.ttl : ANNOTATION.failureGrace] !== undefined ? 'its annotation' : 'the input'
    const finished = finishedAt(job) ? formatDuration(base.finishedSecondsAgo ?? 0) : 'unknown time'
    const described = describeRetention(retention, base.finishedSecondsAgo)
    if (retention === null) return { ...base, reason: `${status} ${finished} ago; ${which} is never (${source})`, retention: described }
    const expired = (base.finishedSecondsAgo ?? 0) >= retention
    return {
      ...base,
      action: expired ? ('delete' as const) : ('keep' as const),
      reason: `${status} ${finished} ago; ${which} ${formatDuration(retention)} (${source}) ${expired ? 'has expired' : 'has not expired'}`,
      retention: described
    }
  })
  return { namespace: observed.namespace, jobs: [...jobs, ...hooks].sort(byName) }
}
