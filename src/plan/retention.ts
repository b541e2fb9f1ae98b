// Retention by outcome — a short ttl for succeeded Jobs, a longer failure-grace for failed ones —
// for the post phase (which sets it on new Jobs) and the sweep phase (which enforces it). Pure.
import type { JobRecord } from '../kube/job-record.ts'
import { formatDuration, parseDuration } from '../text/duration.ts'
import type { PlanPolicy, Problem } from './policy.ts'
import { KeepLast } from './keep-last.ts'
import { jobStatus } from './predicates.ts'
import type { Observed } from '../observe/observed.ts'
import { decidable, makePlan, Planner, type Decision, type Plan, type PlannedJob } from './plan.ts'

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

/** A retention annotation's value: a retention, or `invalid` for one that is neither a duration nor never. */
function annotated(job: JobRecord, key: string): Retention | 'invalid' | undefined {
  const value = job.metadata?.annotations?.[key]?.trim()
  if (value === undefined) return undefined
  if (value.toLowerCase() === 'never') return null
  return parseDuration(value) ?? 'invalid'
}

/** The retention the settings give an outcome: ttl for succeeded, failure-grace for failed. */
export function retentionOf(outcome: 'succeeded' | 'failed', settings: PlanPolicy): Retention {
  return outcome === 'succeeded' ? settings.ttlSeconds : settings.failureGraceSeconds
}

/** Sweep: the retention recorded on the Job (job-sweeper.io/ annotations), else the settings', and which it is. */
export function recordedRetention(job: JobRecord, outcome: 'succeeded' | 'failed', settings: PlanPolicy): { retention: Retention; source: string } {
  const key = outcome === 'succeeded' ? ANNOTATION.ttl : ANNOTATION.failureGrace
  const fromAnnotation = annotated(job, key)
  if (fromAnnotation === undefined) return { retention: retentionOf(outcome, settings), source: 'the input' }
  if (fromAnnotation === 'invalid') {
    return { retention: retentionOf(outcome, settings), source: `the input: its annotation ${key} '${job.metadata?.annotations?.[key]}' is not a duration` }
  }
  return { retention: fromAnnotation, source: 'its annotation' }
}

/** "1h (40m left)", "1h (expired 5m ago)", "never". */
export function describeRetention(retention: Retention, finishedSecondsAgo: number | undefined): string {
  if (retention === null) return 'never'
  if (finishedSecondsAgo === undefined) return `${formatDuration(retention)} after it finishes`
  const left = retention - finishedSecondsAgo
  return left > 0 ? `${formatDuration(retention)} (${formatDuration(left)} left)` : `${formatDuration(retention)} (expired ${formatDuration(-left)} ago)`
}

/** keep-last's ranking of the Jobs the phase decides on (undefined: keep-last is off). */
function keepLastOf(observed: Observed, settings: PlanPolicy, countsUnfinished: boolean): KeepLast | undefined {
  if (settings.keepLast === 0) return undefined
  return new KeepLast(decidable(observed, settings), { keepLast: settings.keepLast, groupBy: settings.groupBy }, countsUnfinished)
}

/**
 * Post: every Job in scope gets its retention as ttlSecondsAfterFinished. With keep-last, the N
 * newest of each group (running ones included: the new revision may still run) get none, since
 * the TTL controller would delete them whatever the count; a later post or sweep gives them their
 * ttl once newer ones have pushed them out.
 */
export function planPost(observed: Observed, settings: PlanPolicy, now: Date): Plan {
  const keepLast = keepLastOf(observed, settings, true)
  return makePlan(
    'post',
    observed,
    settings,
    now,
    (p) => withProblem(p, decidePost(p, settings, keepLast), settings),
    (p, waited) => afterPostWait(p, waited, settings)
  )
}

const where = (p: PlannedJob): string => `Job ${p.namespace}/${p.name}`

/** `: OOMKilled (exit code 137) …` when observe read why the failed Job failed; '' otherwise. */
const because = (p: PlannedJob): string => (p.status === 'failed' && p.job.failedBecause ? `: ${p.job.failedBecause}` : '')

/** Post: a Job that failed is an error unless fail-on-job-failure is false; it is kept for failure-grace either way. */
function failedProblem(p: PlannedJob, settings: PlanPolicy): Problem {
  const kept = `kept for failure-grace ${formatRetention(settings.failureGraceSeconds)}`
  return settings.failOnJobFailure
    ? { severity: 'error', ofTheJob: true, message: `${where(p)} failed${because(p)}; ${kept} so it can be inspected` }
    : { severity: 'warning', message: `${where(p)} failed${because(p)} (fail-on-job-failure is false); ${kept}` }
}

/** Post: a Job that never started will not finish (waiting for it would only run out wait-for-jobs); as a failure, by fail-on-job-failure. */
function stuckProblem(p: PlannedJob, why: string, settings: PlanPolicy): Problem {
  const words = `${where(p)} ${why}; it keeps the upper-bound TTL`
  return settings.failOnJobFailure
    ? { severity: 'error', ofTheJob: true, message: words }
    : { severity: 'warning', message: `${words} (fail-on-job-failure is false)` }
}

/**
 * With wait-for-jobs the phase promises "the step fails when a migration failed", also for one
 * that had already failed (or was stuck) when the phase began.
 */
function withProblem(p: PlannedJob, decision: Decision, settings: PlanPolicy): Decision {
  if (settings.waitForJobsSeconds === 0 || decision.action !== 'set-ttl') return decision
  if (p.status === 'failed') return { ...decision, problem: failedProblem(p, settings) }
  if (p.status === 'stuck') return { ...decision, problem: stuckProblem(p, `${p.job.neverStarted}: not waited for`, settings) }
  return decision
}

/**
 * Post, once a waited Job finished (or turned out never to start): the TTL of its outcome, and the
 * reason the summary shows; a failure is a problem as the policy says.
 */
function afterPostWait(p: PlannedJob, waitedSeconds: number, settings: PlanPolicy): PlannedJob {
  if (p.status === 'stuck') {
    // It keeps the upper bound it was given before the wait, set again once its logs (the init
    // containers that ran, the notes of those that never did, job.json with its Events) are saved.
    const after = `no longer waited for after ${formatDuration(waitedSeconds)} of wait-for-jobs ${formatDuration(settings.waitForJobsSeconds)}`
    return {
      ...p,
      reason: `${p.job.neverStarted}; ${after}; it keeps the upper-bound TTL`,
      problem: stuckProblem(p, `${p.job.neverStarted}: ${after}`, settings)
    }
  }
  if (p.action !== 'set-ttl') return { ...p, reason: `${p.status}: ${p.reason}` }
  const which = p.status === 'succeeded' ? 'ttl' : 'failure-grace'
  const words = p.ttlSeconds === null ? `${which} is never: kept until removed` : `deleted ${which} ${formatRetention(p.ttlSeconds ?? null)} after it finished`
  return {
    ...p,
    reason: `${p.status} after waiting${because(p)}; ${p.chartTtl || p.keptByCount ? p.reason : words}`,
    problem: jobStatus(p.job) === 'failed' ? failedProblem(p, settings) : undefined
  }
}

/**
 * Post: the retention of an outcome. A retention annotation the chart server-side applies (Helm 4)
 * is the Job's own policy: job-sweeper must not overwrite it (the next upgrade would conflict), so
 * it also decides the TTL, as it does for the sweep. Else the input's.
 */
function postRetention(job: JobRecord, outcome: 'succeeded' | 'failed', settings: PlanPolicy): { retention: Retention; source?: string } {
  const key = outcome === 'succeeded' ? ANNOTATION.ttl : ANNOTATION.failureGrace
  if (!job.appliedMetadata?.annotations.includes(key)) return { retention: retentionOf(outcome, settings) }
  const { retention, source } = recordedRetention(job, outcome, settings)
  return { retention, source: source === 'its annotation' ? `the chart's annotation ${key}` : source }
}

/** Post: the Job's ttl and failure-grace as post decides them (the chart's annotations, else the input's): its policy by outcome. */
export function postRetentions(job: JobRecord, settings: PlanPolicy): { ttl: Retention; failureGrace: Retention } {
  return { ttl: postRetention(job, 'succeeded', settings).retention, failureGrace: postRetention(job, 'failed', settings).retention }
}

function decidePost(p: PlannedJob, settings: PlanPolicy, keepLast: KeepLast | undefined): Decision {
  const decision = withKeepLast(p, decidePostRetention(p, settings), keepLast, settings)
  const applied = p.job.appliedMetadata
  const kept = applied ? [...applied.labels.map((k) => `label ${k}`), ...applied.annotations.map((k) => `annotation ${k}`)] : []
  const reason = kept.length > 0 && decision.action !== 'keep' ? `${decision.reason}; the chart's ${kept.join(', ')} left as it sets it` : decision.reason
  const appliedBy = p.job.ttlAppliedBy
  if (!appliedBy || decision.action === 'keep') return { ...decision, reason }
  // Helm 4 (server-side apply) owns the chart's value: taking the field over would make the next
  // helm upgrade fail with a field-manager conflict. The chart's TTL stands; the rest (logs, the
  // wait, the annotations) goes on as for any Job.
  const ttl = p.job.spec?.ttlSecondsAfterFinished
  return {
    ...decision,
    chartTtl: true,
    retention: ttl === undefined ? 'never' : `${formatDuration(ttl)} (the chart's)`,
    reason: `${reason} — but the chart sets ttlSecondsAfterFinished ${ttl ?? '—'} (applied by ${appliedBy.join(', ')}): the chart's value stands, so the next helm upgrade does not conflict`
  }
}

function decidePostRetention(p: PlannedJob, settings: PlanPolicy): Decision {
  if (p.status === 'terminating') return { action: 'keep', reason: 'being deleted' }
  if (p.status === 'running' || p.status === 'suspended' || p.status === 'external' || p.status === 'stuck') {
    const [ok, failed] = [postRetention(p.job, 'succeeded', settings).retention, postRetention(p.job, 'failed', settings).retention]
    const bound = ok === null || failed === null ? null : Math.max(ok, failed)
    // A suspended Job may wait for admission for days, another controller's Job is not ours to
    // wait for, and a stuck one may never run: they get the upper bound, and no wait.
    const waiting = settings.waitForJobsSeconds > 0 && p.status === 'running'
    const state = p.status === 'stuck' ? (p.job.neverStarted ?? p.status) : p.status
    const reason = `${state}; TTL ${formatRetention(bound)} (the larger of ttl and failure-grace) until it finishes${waiting ? `; waiting up to ${formatDuration(settings.waitForJobsSeconds)} to set the one for its outcome` : ''}`
    return { action: waiting ? 'wait' : 'set-ttl', ttlSeconds: bound, reason, retention: describeRetention(bound, undefined) }
  }
  const { retention, source } = postRetention(p.job, p.status, settings)
  const which = `${p.status === 'succeeded' ? 'ttl' : 'failure-grace'}${source ? ` (${source})` : ''}`
  const ago = p.finishedSecondsAgo === undefined ? '' : ` ${formatDuration(p.finishedSecondsAgo)} ago`
  const reason =
    retention === null
      ? `${p.status}${ago}${because(p)}; ${which} is never: kept until removed`
      : `${p.status}${ago}${because(p)}; deleted ${which} ${formatDuration(retention)} after it finished`
  return { action: 'set-ttl', ttlSeconds: retention, reason, retention: describeRetention(retention, p.finishedSecondsAgo) }
}

/** Post with keep-last: the decision for `p`'s standing in its group (its retention's decision otherwise). */
function withKeepLast(p: PlannedJob, decision: Decision, keepLast: KeepLast | undefined, settings: PlanPolicy): Decision {
  const verdict = decision.action === 'keep' ? undefined : keepLast?.verdict(p.job)
  if (!verdict || verdict.standing === 'earlier-failure') return decision
  if (verdict.standing !== 'newest') return { ...decision, reason: `${verdict.words}; ${decision.reason}` }
  // A running Job waited for is among the newest whatever it ends as (a failure is ranked apart,
  // and decided again once it finishes): no TTL while it runs, not the upper bound, which would
  // stay if the wait timed out and let the TTL controller delete a Job keep-last keeps.
  if (decision.action === 'wait') {
    const failed = `a failure gets failure-grace ${formatRetention(settings.failureGraceSeconds)}`
    return {
      ...decision,
      ttlSeconds: null,
      keptByCount: true,
      retention: 'none while among the newest',
      reason: `${verdict.words}: no TTL while it runs; waiting up to ${formatDuration(settings.waitForJobsSeconds)} for its outcome (${failed})`
    }
  }
  const why = settings.ttlSeconds === null ? '' : `; ttl ${formatDuration(settings.ttlSeconds)} applies once it is older`
  return { action: 'set-ttl', ttlSeconds: null, keptByCount: true, reason: `${verdict.words}: no TTL${why}`, retention: 'none while among the newest' }
}

/**
 * Sweep: delete the finished Jobs whose retention has expired; keep the rest, saying how long is
 * left. With keep-last, the N newest succeeded Jobs of each group are kept whatever their ttl.
 */
export function planSweep(observed: Observed, settings: PlanPolicy, now: Date): Plan {
  const planner = sweepPlanner(observed, settings, now)
  planner.add(observed.jobs)
  return planner.plan(observed)
}

/** Plans a sweep page by page: add() each page of the list as it arrives, then plan(). */
export interface SweepPlanner {
  add(records: JobRecord[]): void
  plan(listed: Pick<Observed, 'namespace' | 'resourceVersions'>): Plan
}

/**
 * The sweep's planner. Without keep-last each Job is decided on its own, as its page arrives, and
 * of a Job it keeps (most of them, in a cluster that needs a sweeper) only a few fields stay. With
 * keep-last a Job's standing depends on the whole of its group, which may span every page: the
 * records are held until the list has ended (their trimmed JobRecords: see kube/job-record.ts).
 */
export function sweepPlanner(frame: Observed, settings: PlanPolicy, now: Date): SweepPlanner {
  if (settings.keepLast > 0) {
    const records: JobRecord[] = []
    return {
      add: (page) => void records.push(...page),
      plan: (listed) => {
        const observed = { ...frame, jobs: records }
        const keepLast = keepLastOf(observed, settings, false)
        const plan = makePlan('sweep', observed, settings, now, (p) => withSweepKeepLast(p, decideSweep(p, settings), keepLast))
        return { ...plan, namespace: listed.namespace, resourceVersions: listed.resourceVersions ?? {} }
      }
    }
  }
  const planner = new Planner('sweep', frame, settings, now, (p) => decideSweep(p, settings), true)
  return { add: (page) => planner.add(page), plan: (listed) => planner.plan(listed) }
}

function withSweepKeepLast(p: PlannedJob, decision: Decision, keepLast: KeepLast | undefined): Decision {
  const verdict = keepLast?.verdict(p.job)
  if (!verdict || verdict.standing === 'earlier-failure') return decision
  if (verdict.standing === 'newest') return { ...decision, action: 'keep', reason: verdict.words }
  return { ...decision, reason: `${verdict.words}; ${decision.reason}` }
}

function decideSweep(p: PlannedJob, settings: PlanPolicy): Decision {
  if (p.status === 'terminating') return { action: 'keep', reason: 'already being deleted' }
  if (p.status !== 'succeeded' && p.status !== 'failed')
    return { action: 'keep', reason: `${p.status === 'running' ? 'still running' : p.status}: not finished` }
  const { retention, source } = recordedRetention(p.job, p.status, settings)
  const which = p.status === 'succeeded' ? 'ttl' : 'failure-grace'
  const finished = p.finishedSecondsAgo === undefined ? 'at an unknown time' : `${formatDuration(p.finishedSecondsAgo)} ago`
  const described = describeRetention(retention, p.finishedSecondsAgo)
  if (retention === null) return { action: 'keep', reason: `${p.status} ${finished}; ${which} is never (${source})`, retention: described }
  const expired = (p.finishedSecondsAgo ?? 0) >= retention
  return {
    action: expired ? 'delete' : 'keep',
    reason: `${p.status} ${finished}; ${which} ${formatDuration(retention)} (${source}) ${expired ? 'has expired' : 'has not expired'}`,
    retention: described
  }
}
