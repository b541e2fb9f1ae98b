// Which rendered Jobs `pre` really clears: a Job the upgrade cannot write is "cleared by pre" only
// when pre, with the same settings, deletes its live namesake. Pre works in one namespace, on the
// Jobs its scope names (release, selector, jobs), leaves hook Jobs to their own delete policies
// unless include-hooks, and never deletes an unfinished Job another controller runs
// (spec.managedBy). Pure: the same predicates pre's planner uses.
import type { JobRecord } from '../kube/job-record.ts'
import type { KubeObject } from '../kube/manifest-client.ts'
import { belongsToRelease, hookAnnotation, isFinished, managedElsewhere } from '../plan/predicates.ts'
import { matchesSelector } from '../settings/selector.ts'

/** The settings that decide which Jobs pre deletes. */
export interface PreScope {
  /** The one namespace pre works in. */
  namespace: string
  release?: string
  selector?: string
  jobs?: string[]
  includeHooks: boolean
}

/** Why pre leaves the live Job `live` (rendered as `rendered`) in place, or undefined: pre deletes it. */
export function preLeaves(rendered: KubeObject, live: KubeObject | undefined, scope: PreScope): string | undefined {
  const namespace = rendered.metadata?.namespace ?? scope.namespace
  if (namespace !== scope.namespace) return `it is in namespace ${namespace}, and pre works in ${scope.namespace} only`
  if (live === undefined) return 'it does not exist'
  const job = live as JobRecord
  const hook = hookAnnotation(job)
  if (hook && !scope.includeHooks) return `the live Job is a hook (${hook.key}: ${hook.value}), which pre leaves alone without include-hooks`
  const by = managedElsewhere(job)
  if (by !== undefined && !isFinished(job)) return `the live Job is not finished and is run by ${by} (spec.managedBy), which pre never deletes`
  if (scope.release !== undefined && !belongsToRelease(job, scope.release, namespace)) return `the live Job is not annotated as of release ${scope.release}`
  if (scope.selector !== undefined && !matchesSelector(scope.selector, live.metadata?.labels))
    return `the live Job's labels do not match selector '${scope.selector}'`
  if (scope.jobs !== undefined && !scope.jobs.includes(live.metadata?.name ?? '')) return 'it is not one of the Jobs named in jobs'
  return undefined
}
