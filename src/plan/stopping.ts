// A held Job whose pods are being stopped before it finished: its deletion was asked (kubectl
// delete, helm uninstall), or its pods are being deleted (a namespace's deletion, an eviction).
// What a pod writes while the kubelet stops it (a migration's rollback after SIGTERM) is the log
// that says most, and a pod being deleted goes, logs and all, the moment its containers end: a read
// after that finds nothing. So the keeper follows the log of each container of a pod being deleted
// until it ends. A Job deleted while its pods run (a background deletion) is a second case: the
// garbage collector deletes its pods only once the Job is gone, which the hold prevents, and the Job
// controller leaves a Job being deleted alone. The keeper deletes those pods itself, as the
// collector would right after the release, so that they stop while the Job is held and their last
// lines are followed. The Job is archived once every one of its pods has ended.
import type { V1Pod } from '@kubernetes/client-node'
import { podEnded } from './archive-state.ts'

/** What the keeper does with the pods of a held Job being stopped. */
export interface StoppingPlan {
  /** Pods to delete, with their own grace period: their Job's deletion was asked, and nothing else stops them while it is held. */
  stop: { name: string; uid: string }[]
  /** Containers to follow to their end: running in a pod being deleted (or deleted now), not followed yet. */
  follow: { pod: string; container: string; graceSeconds: number }[]
  /** Every pod ended, or none is left: the Job's archive can be made, whole. */
  settled: boolean
}

/** The key a follow is known by: `<pod>/<container>`. */
export const followKey = (f: { pod: string; container: string }): string => `${f.pod}/${f.container}`

/** The default terminationGracePeriodSeconds, for a pod that does not say. */
const DEFAULT_GRACE_SECONDS = 30

/**
 * The plan for `pods` (the Job's, as listed): `jobDeleted`, the Job's deletion was asked (its pods
 * are stopped); `following`, the followKeys of the follows in progress.
 */
export function stoppingPlan(pods: V1Pod[], jobDeleted: boolean, following: ReadonlySet<string>): StoppingPlan {
  const plan: StoppingPlan = { stop: [], follow: [], settled: true }
  for (const pod of pods) {
    if (podEnded(pod)) continue
    plan.settled = false
    const name = pod.metadata?.name ?? ''
    const deleting = pod.metadata?.deletionTimestamp !== undefined
    if (!deleting && !jobDeleted) continue // it runs on: read when it ends
    if (!deleting) plan.stop.push({ name, uid: pod.metadata?.uid ?? '' })
    const graceSeconds = pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS
    const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]
    for (const status of statuses) {
      const f = { pod: name, container: status.name, graceSeconds }
      // A container that runs writes on until the kubelet stops it; one that ended or never ran is read as it is.
      if (status.state?.running && !following.has(followKey(f))) plan.follow.push(f)
    }
  }
  return plan
}
