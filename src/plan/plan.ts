// The pre-upgrade plan: for each Job in scope, what to do and why, in words a user reads in the
// summary. Pure: it imports neither @actions/core nor the Kubernetes client, and the clock is a
// parameter, so every rule is testable in a table.
import type { V1Job } from '@kubernetes/client-node'
import type { HarvestLogs, Settings } from '../settings/settings.ts'
import { formatDuration } from '../settings/duration.ts'
import { ageSeconds, belongsToRelease, finishedAt, hookAnnotation, isFinished, jobStatus, type JobStatus } from './predicates.ts'

/**
 * keep: leave it; wait: wait for it to finish, then act (pre: delete it; post: set its exact TTL);
 * delete: delete now; block: fail the step, change nothing; set-ttl: give it its retention.
 */
export type JobAction = 'keep' | 'wait' | 'delete' | 'block' | 'set-ttl'

/** One Job and the decision about it. */
export interface PlannedJob {
  namespace: string
  name: string
  uid: string
  status: JobStatus
  ageSeconds: number
  action: JobAction
  /** Why, for the summary. */
  reason: string
  /** Post: the ttlSecondsAfterFinished to set (null: remove it, the Job is kept forever). */
  ttlSeconds?: number | null
  /** The Job's retention for the summary's TTL column: "1h (40m left)", "expired 2h ago". */
  retention?: string
  /** Seconds since the Job finished, if it has. */
  finishedSecondsAgo?: number
  job: V1Job
}

/** What observe() saw: the candidate Jobs, and for manifest scope, the rendered Jobs' verdicts. */
export interface Observed {
  /** The namespace worked in (sweep: the namespaces, for the summary). */
  namespace: string
  /** Jobs in the namespace(s) (already narrowed by the label selector, if any). */
  jobs: V1Job[]
  /** With `manifest`: Job name → undefined if the live Job's template equals the rendered one, else why not. */
  manifest?: Map<string, string | undefined>
}

export interface PrunePlan {
  namespace: string
  jobs: PlannedJob[]
}

/** The Job is one the settings' scope names (all given scope fields must match). */
export function inScope(job: V1Job, observed: Observed, settings: Settings): boolean {
  const name = job.metadata?.name ?? ''
  const { release, jobs } = settings.scope
  if (release !== undefined && !belongsToRelease(job, release, job.metadata?.namespace ?? observed.namespace)) return false
  if (jobs !== undefined && !jobs.includes(name)) return false
  if (observed.manifest !== undefined && !observed.manifest.has(name)) return false
  return true
}

function decide(job: V1Job, status: JobStatus, age: number, observed: Observed, settings: Settings): { action: JobAction; reason: string } {
  const name = job.metadata?.name ?? ''
  if (status === 'terminating') return { action: 'delete', reason: 'already being deleted; waiting until it is gone' }
  let conflict = 'a Job’s pod template is immutable, so helm upgrade fails while it exists'
  if (observed.manifest !== undefined) {
    const difference = observed.manifest.get(name)
    if (difference === undefined) return { action: 'keep', reason: 'unchanged — the upgrade will not touch it' }
    conflict = `differs from the rendered manifest: ${difference}`
  }
  if (status === 'running') {
    const running = `running for ${formatDuration(age)}`
    switch (settings.onRunning) {
      case 'wait':
        return { action: 'wait', reason: `${running}; waiting for it to finish, then deleting it (${conflict})` }
      case 'delete':
        return { action: 'delete', reason: `${running}; deleting it anyway (on-running: delete; ${conflict})` }
      case 'fail':
        return { action: 'block', reason: `${running} and on-running is fail: nothing was deleted (${conflict})` }
    }
  }
  return { action: 'delete', reason: `${status}; ${conflict}` }
}

/** A PlannedJob for `job` with the decision made about it. */
export function plannedJob(job: V1Job, observed: Observed, now: Date, decision: Pick<PlannedJob, 'action' | 'reason'> & Partial<PlannedJob>): PlannedJob {
  const finished = finishedAt(job)
  return {
    namespace: job.metadata?.namespace ?? observed.namespace,
    name: job.metadata?.name ?? '',
    uid: job.metadata?.uid ?? '',
    status: jobStatus(job),
    ageSeconds: ageSeconds(job, now),
    finishedSecondsAgo: finished && isFinished(job) ? Math.max(0, (now.getTime() - finished.getTime()) / 1000) : undefined,
    job,
    ...decision
  }
}

/** The Jobs in scope, hooks set aside (kept, with the reason) unless include-hooks. */
export function jobsInScope(observed: Observed, settings: Settings, now: Date): { candidates: V1Job[]; hooks: PlannedJob[] } {
  const candidates: V1Job[] = []
  const hooks: PlannedJob[] = []
  for (const job of observed.jobs.filter((j) => inScope(j, observed, settings))) {
    const hook = hookAnnotation(job)
    if (hook && !settings.includeHooks) {
      const reason = `hook Job (${hook.key}: ${hook.value}): its own hook-delete-policy manages it; set include-hooks to include it`
      hooks.push(plannedJob(job, observed, now, { action: 'keep', reason }))
    } else candidates.push(job)
  }
  return { candidates, hooks }
}

export const byName = (a: PlannedJob, b: PlannedJob): number => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name)

/** Decides, for every Job in scope, what the pre phase does with it. */
export function planPrune(observed: Observed, settings: Settings, now: Date): PrunePlan {
  const { candidates, hooks } = jobsInScope(observed, settings, now)
  const jobs = candidates.map((job) => plannedJob(job, observed, now, decide(job, jobStatus(job), ageSeconds(job, now), observed, settings)))
  return { namespace: observed.namespace, jobs: [...jobs, ...hooks].sort(byName) }
}

/** Whether a Job's logs are saved before it is deleted, given its final status. */
export function shouldHarvest(harvest: HarvestLogs, status: JobStatus): boolean {
  return harvest === 'all' || (harvest === 'failed' && status === 'failed')
}
