// Where a pod's Events change the verdict of its status (pod-start.ts), either way. Pure but for
// reading the Events, which is done only for a pod that needs it.
//
// A pod no node can take now may get one: the cluster autoscaler, when it decides to add a node for
// a pending pod, records a TriggeredScaleUp Event on the pod ("pod triggered scale-up: [{… 0->1
// (max: 3)}]"), and NotTriggerScaleUp when no node group could take it. Provisioning a node takes
// minutes, often longer than stuck-after: until the autoscaler gives up, such a pod is on its way,
// not stuck. Karpenter says the same with a Nominated Event.
//
// A pod on a node whose containers are being created shows no error in its status, however long
// that takes: a pull or a volume in progress is not stuck. But a volume whose Secret or ConfigMap
// does not exist never mounts (the kubelet retries, and says so in a FailedMount Event: "MountVolume.SetUp
// failed for volume \"db-ca\" : secret \"db-ca\" not found"), as an env var from a missing Secret
// never does (CreateContainerConfigError, which the status shows): such a pod is stuck.
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node'
import type { JobsClient } from '../kube/client.ts'
import { ClusterUnreachable } from '../kube/retry.ts'
import { formatDuration } from '../text/duration.ts'
import { eventTime } from './job-events.ts'
import { creatingPast, currentPod, neverStarted, unschedulable, type StartFacts } from './pod-start.ts'

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

/** The kubelet's FailedMount for a volume whose Secret or ConfigMap is missing (kubelet's volume manager and the secret and configmap plugins). */
const MISSING_SOURCE = /^MountVolume\.SetUp failed for volume "([^"]+)" : (secret|configmap) "([^"]+)" not found$/

/**
 * `volume db-ca: secret "db-ca" not found (FailedMount)` when the newest FailedMount Event about the
 * pod says its volume's Secret or ConfigMap does not exist; undefined for none, or for any other
 * failure to mount (an attach or a provisioning that may yet complete).
 */
export function missingVolumeSource(events: CoreV1Event[]): string | undefined {
  const newest = events.filter((e) => e.reason === 'FailedMount').sort((a, b) => eventTime(b) - eventTime(a))[0]
  const m = MISSING_SOURCE.exec(newest?.message ?? '')
  return m ? `volume ${m[1]}: ${m[2]} "${m[3]}" not found (FailedMount)` : undefined
}

/**
 * neverStarted(), read with the current pod's Events where they change it: not stuck when no node
 * can take the pod but the autoscaler is adding one; stuck when its containers have been created
 * for stuck-after and its volume's Secret or ConfigMap does not exist. The Events are read only for
 * those two; when they cannot be read, the status's verdict stands.
 */
export async function stuckReadingEvents(
  client: JobsClient,
  job: StartFacts,
  pods: V1Pod[],
  now: Date,
  stuckAfterSeconds: number
): Promise<string | undefined> {
  const why = neverStarted(job, pods, now, stuckAfterSeconds)
  if (pods.length === 0) return why
  const pod = currentPod(pods)
  const creating = why === undefined && creatingPast(job, pods, now, stuckAfterSeconds)
  const waitingForNode = why !== undefined && unschedulable(pod) !== undefined
  if ((!creating && !waitingForNode) || !pod.metadata?.uid) return why
  let events: CoreV1Event[]
  try {
    events = await client.listEventsOf(pod.metadata.namespace ?? job.metadata?.namespace ?? '', pod.metadata.uid)
  } catch (e) {
    if (e instanceof ClusterUnreachable) throw e
    return why
  }
  if (waitingForNode) return scaleUpComing(events, now) ? undefined : why
  const missing = missingVolumeSource(events)
  return missing ? `never started: ${missing}` : undefined
}
