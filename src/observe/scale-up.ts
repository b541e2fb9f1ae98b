// A pod no node can take now may get one: the cluster autoscaler, when it decides to add a node for
// a pending pod, records a TriggeredScaleUp Event on the pod ("pod triggered scale-up: [{… 0->1
// (max: 3)}]"), and NotTriggerScaleUp when no node group could take it. Provisioning a node takes
// minutes, often longer than stuck-after: until the autoscaler gives up, such a pod is on its way,
// not stuck. Karpenter says the same with a Nominated Event. Pure but for reading the Events.
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node'
import type { JobsClient } from '../kube/client.ts'
import { ClusterUnreachable } from '../kube/retry.ts'
import { formatDuration } from '../text/duration.ts'
import { eventTime } from './job-events.ts'
import { currentPod, neverStarted, unschedulable, type StartFacts } from './pod-start.ts'

/** Events that say a node is being added for the pod: the cluster autoscaler's, and Karpenter's. */
const COMING = new Set(['TriggeredScaleUp', 'Nominated'])
/** Events that say no node will be added for it. */
const NOT_COMING = new Set(['NotTriggerScaleUp', 'FailedScaleUp'])
/** How long a scale-up is believed: the cluster autoscaler's own max-node-provision-time (15m). */
export const SCALE_UP_BELIEVED_SECONDS = 15 * 60

/**
 * `a node is being added for it (TriggeredScaleUp 40s ago)` when the newest of the autoscaler's
 * Events about the pod says a node is coming, and it is no older than the autoscaler waits for one;
 * undefined when none says so, or a newer one says none will come.
 */
export function scaleUpComing(events: CoreV1Event[], now: Date): string | undefined {
  const newest = events.filter((e) => COMING.has(e.reason ?? '') || NOT_COMING.has(e.reason ?? '')).sort((a, b) => eventTime(b) - eventTime(a))[0]
  if (newest === undefined || !COMING.has(newest.reason ?? '')) return undefined
  const age = (now.getTime() - eventTime(newest)) / 1000
  if (age > SCALE_UP_BELIEVED_SECONDS) return undefined
  return `a node is being added for it (${newest.reason} ${formatDuration(Math.max(0, Math.round(age)))} ago)`
}

/**
 * neverStarted(), unless the Job is stuck only because no node can take its pod and the autoscaler
 * is adding one: then undefined (not stuck). The pod's Events are read only for such a verdict; when
 * they cannot be read, the verdict stands.
 */
export async function stuckUnlessScalingUp(
  client: JobsClient,
  job: StartFacts,
  pods: V1Pod[],
  now: Date,
  stuckAfterSeconds: number
): Promise<string | undefined> {
  const why = neverStarted(job, pods, now, stuckAfterSeconds)
  if (why === undefined || pods.length === 0) return why
  const pod = currentPod(pods)
  if (unschedulable(pod) === undefined || !pod.metadata?.uid) return why
  try {
    return scaleUpComing(await client.listEventsOf(pod.metadata.namespace ?? job.metadata?.namespace ?? '', pod.metadata.uid), now) ? undefined : why
  } catch (e) {
    if (e instanceof ClusterUnreachable) throw e
    return why
  }
}
