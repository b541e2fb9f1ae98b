// What the planner decides with: the settings that are decisions about Jobs, and none of where the
// cluster is, where logs go or how fast the work goes. Built from Settings in one place
// (planPolicy), as Kubernetes' needsCleanup(job) and timeLeft(job, since) see only the Job, its
// TTL and a time.
import { logsGoneWithRun } from '../settings/logs-dir.ts'
import type { HarvestLogs, OnRunning, Scope, Settings } from '../settings/settings.ts'

/** The planner's view of the settings. */
export interface PlanPolicy {
  /** Which Jobs are in scope (the manifest's verdicts come with Observed). */
  scope: Pick<Scope, 'release' | 'selector' | 'jobs'>
  /** Whether Helm/Argo hook Jobs are in scope. */
  includeHooks: boolean
  /** Pre: what to do with a conflicting Job that is still running. */
  onRunning: OnRunning
  /** Whose logs are saved before a Job is deleted or given its TTL. */
  harvestLogs: HarvestLogs
  /** Retention of a succeeded Job, in seconds; null: never. */
  ttlSeconds: number | null
  /** Retention of a failed Job, in seconds; null: never. */
  failureGraceSeconds: number | null
  /** Post: how long running Jobs are waited for (0: not at all). */
  waitForJobsSeconds: number
  /** Post: a failed (or never started) Job fails the step, rather than warns. */
  failOnJobFailure: boolean
  /** The newest Jobs kept per group whatever their ttl (0: off). */
  keepLast: number
  /** With keepLast: the label whose value groups Jobs no CronJob or release groups. */
  groupBy?: string
  /**
   * pre, sweep: why the logs this run saves do not outlive it (logsGoneWithRun), so that a keeper's
   * hold is kept rather than let go into them; undefined: they do.
   */
  logsGoneWithRun?: string
}

/** The planner's policy from the run's settings (and the environment: whether the logs outlive the run). */
export function planPolicy(settings: Settings, env: NodeJS.ProcessEnv = {}): PlanPolicy {
  const { release, selector, jobs } = settings.scope
  return {
    scope: { release, selector, jobs },
    includeHooks: settings.includeHooks,
    onRunning: settings.onRunning,
    harvestLogs: settings.harvestLogs,
    ttlSeconds: settings.ttlSeconds,
    failureGraceSeconds: settings.failureGraceSeconds,
    waitForJobsSeconds: settings.waitForJobsSeconds,
    failOnJobFailure: settings.failOnJobFailure,
    keepLast: settings.keepLast,
    groupBy: settings.groupBy,
    logsGoneWithRun: logsGoneWithRun(settings.logsTarget, env)
  }
}

/** What the step reports about a Job, as the plan decided: an error fails the step, a warning does not. */
export interface Problem {
  severity: 'error' | 'warning'
  message: string
  /** The Job's own state is the problem (it failed, never started, still runs), not the cluster or job-sweeper: the CLI's exit code 1, not 3. */
  ofTheJob?: true
}
