// The pre-upgrade plan: for each Job in scope, what to do and why, in words a user reads in the
// summary. Pure: it imports neither @actions/core nor the Kubernetes client, and the clock is a
// parameter, so every rule is testable in a table.
import type { V1Job } from '@kubernetes/client-node'
import type { HarvestLogs, Settings } from '../settings/settings.ts'
import { formatDuration } from '../settings/duration.ts'
import { ageSeconds, belongsToRelease, hookAnnotation, jobStatus, type JobStatus } from './predicates.ts'

/** keep: leave it; wait: wait for it to finish, then delete; delete: delete now; block: fail the step. */
export type PruneAction = 'keep' | 'wait' | 'delete' | 'block'

/** One Job and the decision about it. */
export interface PlannedJob {
  namespace: string
  name: string
  uid: string
  status: JobStatus
  ageSeconds: number
  action: PruneAction
  /** Why, for the summary. */
  reason: string
  job: V1Job
}

/** What observe() saw: the candidate Jobs, and for manifest scope, the rendered Jobs' verdicts. */
export interface Observed {
  namespace: string
  /** Jobs in the namespace (already narrowed by the label selector, if any). */
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
  if (release !== undefined && !belongsToRelease(job, release, observed.namespace)) return false
  if (jobs !== undefined && !jobs.includes(name)) return false
  if (observed.manifest !== undefined && !observed.manifest.has(name)) return false
  return true
}

function decide(job: V1Job, status: JobStatus, age: number, observed: Observed, settings: Settings): { action: PruneAction; reason: string } {
  const name = job.metadata?.name ?? ''
  const hook = hookAnnotation(job)
  if (hook && !settings.includeHooks) {
    return { action: 'keep', reason: `hook Job (${hook.key}: ${hook.value}): its own hook-delete-policy manages it; set include-hooks to sweep it` }
  }
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

/** Decides, for every Job in scope, what the pre phase does with it. */
export function planPrune(observed: Observed, settings: Settings, now: Date): PrunePlan {
  const jobs = observed.jobs
    .filter((job) => inScope(job, observed, settings))
    .map((job): PlannedJob => {
      const status = jobStatus(job)
      const age = ageSeconds(job, now)
      return {
        namespace: observed.namespace,
        name: job.metadata?.name ?? '',
        uid: job.metadata?.uid ?? '',
        status,
        ageSeconds: age,
        ...decide(job, status, age, observed, settings),
        job
      }
    })
    .sort((a, b) => a.name.localeCompare(b.name))
  return { namespace: observed.namespace, jobs }
}

/** Whether a Job's logs are saved before it is deleted, given its final status. */
export function shouldHarvest(harvest: HarvestLogs, status: JobStatus): boolean {
  return harvest === 'all' || (harvest === 'failed' && status === 'failed')
}
