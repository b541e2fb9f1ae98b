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

function decide(job: V1Job, status: JobStatus, age: number, observed: Observed, settings: Settings): Decision {
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

/** What a phase decides about one Job: the action, why, and for post the TTL. */
export type Decision = Pick<PlannedJob, 'action' | 'reason'> & Partial<Pick<PlannedJob, 'ttlSeconds' | 'retention'>>

/** The facts about a Job that every decision starts from (the action is still to be decided). */
function facts(job: V1Job, observed: Observed, now: Date): PlannedJob {
  const finished = finishedAt(job)
  return {
    namespace: job.metadata?.namespace ?? observed.namespace,
    name: job.metadata?.name ?? '',
    uid: job.metadata?.uid ?? '',
    status: jobStatus(job),
    ageSeconds: ageSeconds(job, now),
    finishedSecondsAgo: finished && isFinished(job) ? Math.max(0, (now.getTime() - finished.getTime()) / 1000) : undefined,
    action: 'keep',
    reason: '',
    job
  }
}

/**
 * Plans every Job in scope, sorted by namespace and name: hook Jobs are kept (their own
 * hook-delete-policy manages them) unless include-hooks; every other Job is what `decide` says.
 */
export function planJobs(observed: Observed, settings: Settings, now: Date, decide: (job: PlannedJob) => Decision): PlannedJob[] {
  return observed.jobs
    .filter((job) => inScope(job, observed, settings))
    .map((job) => {
      const known = facts(job, observed, now)
      const hook = hookAnnotation(job)
      if (hook && !settings.includeHooks) {
        return { ...known, reason: `hook Job (${hook.key}: ${hook.value}): its own hook-delete-policy manages it; set include-hooks to include it` }
      }
      return { ...known, ...decide(known) }
    })
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name))
}

/** Decides, for every Job in scope, what the pre phase does with it. */
export function planPrune(observed: Observed, settings: Settings, now: Date): PrunePlan {
  return { namespace: observed.namespace, jobs: planJobs(observed, settings, now, (p) => decide(p.job, p.status, p.ageSeconds, observed, settings)) }
}

/** Whether a Job's logs are saved before it is deleted, given its final status. */
export function shouldHarvest(harvest: HarvestLogs, status: JobStatus): boolean {
  return harvest === 'all' || (harvest === 'failed' && status === 'failed')
}
