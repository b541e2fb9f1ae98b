// Whether a Job ever started, read from its pods as a kubelet writes them. A Job none of whose pods
// ever ran a main container (now or before: running, terminated, a previous termination, a
// restart) is stuck, not running: deleting it interrupts nothing and loses no main container's log.
// Pure: the pods, the clock and the minimum age are parameters.
import type { V1ContainerStateTerminated, V1ContainerStatus, V1Pod } from '@kubernetes/client-node'
import type { JobRecord } from '../kube/job-record.ts'
import { formatDuration } from '../text/duration.ts'
import { cut } from '../text/shorten.ts'

/** Waiting reasons of a container whose image cannot be pulled: the reason is shown with the image. */
const IMAGE_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull', 'RegistryUnavailable', 'SignatureValidationFailed'])
/** Waiting reasons of a container on its way, with no error reported (yet). */
const PROGRESS_REASONS = new Set(['ContainerCreating', 'PodInitializing'])
/** A message quoted in a reason is cut here (the pod has it whole). */
const MAX_DETAIL = 200

const time = (value: Date | string | undefined): number | undefined => (value === undefined ? undefined : new Date(value).getTime())

/**
 * The kubelet marks every container of a pod that ends as terminated, with this reason and no
 * start time, when it never found it running: a container that never started.
 */
function ranOnce(t: V1ContainerStateTerminated | undefined): boolean {
  return t !== undefined && !(t.reason === 'ContainerStatusUnknown' && !t.startedAt)
}

/** The container has run, now or before. */
export function containerRan(s: V1ContainerStatus): boolean {
  return s.state?.running !== undefined || ranOnce(s.state?.terminated) || ranOnce(s.lastState?.terminated) || (s.restartCount ?? 0) > 0
}

/** Some main container (spec.containers; not init containers, nor sidecars) of the pod has run. */
export function podRan(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || (pod.status?.containerStatuses ?? []).some(containerRan)
}

/** How often an init container failed: its restarts (it restarts only on failure), and its last run if that failed. */
function initFailures(s: V1ContainerStatus): { count: number; exitCode?: number } {
  const last = s.state?.terminated ?? (s.state?.waiting ? s.lastState?.terminated : undefined)
  const failedLast = last !== undefined && ranOnce(last) && last.exitCode !== 0
  return { count: (s.restartCount ?? 0) + (failedLast ? 1 : 0), exitCode: failedLast ? last.exitCode : s.lastState?.terminated?.exitCode }
}

/**
 * The init container that failed most across the pods, in the words of a reason; none while that
 * container runs again in the current pod: a retry in progress (a wait-for-db that exits until the
 * database answers) is progress, and the Job's backoffLimit ends it if it keeps failing.
 */
function failedInit(pods: V1Pod[], current: V1Pod): string | undefined {
  const failures = new Map<string, { count: number; exitCode?: number }>()
  for (const pod of pods) {
    for (const s of pod.status?.initContainerStatuses ?? []) {
      const f = initFailures(s)
      const sum = failures.get(s.name) ?? { count: 0 }
      failures.set(s.name, { count: sum.count + f.count, exitCode: f.exitCode ?? sum.exitCode })
    }
  }
  const [name, worst] = [...failures].filter(([, f]) => f.count > 0).sort((a, b) => b[1].count - a[1].count)[0] ?? []
  if (name === undefined || worst === undefined) return undefined
  if (current.status?.initContainerStatuses?.some((s) => s.name === name && s.state?.running)) return undefined
  const code = worst.exitCode === undefined ? '' : ` (exit code ${worst.exitCode})`
  return `init container ${name} failed ${worst.count} time${worst.count === 1 ? '' : 's'}${code}`
}

/**
 * Native sidecars: init containers with restartPolicy Always (as a service mesh injects). They run
 * beside the main containers for the pod's whole life, so one that runs says nothing of them.
 */
function sidecars(pod: V1Pod): Set<string> {
  return new Set((pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((c) => c.name))
}

/** The pod is on a node (scheduled): its containers are being created, not waiting for a place. */
const scheduled = (pod: V1Pod): boolean =>
  !!pod.spec?.nodeName || pod.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'True') === true

/**
 * The registry's answer at the end of a failed pull's message, as the kubelet passes containerd's
 * error on (`…: failed to resolve image: <image>: not found`, `…: 401 Unauthorized`; ImagePullBackOff
 * repeats the last ErrImagePull's after `Back-off pulling image "…": `). None without one.
 */
function pullAnswer(message: string | undefined): string | undefined {
  const at = message?.lastIndexOf(': ') ?? -1
  if (message === undefined || at < 0) return undefined
  const answer = message.slice(at + 2).trim()
  return answer === '' || answer.startsWith('Back-off pulling image') ? undefined : cut(answer, MAX_ANSWER)
}
const MAX_ANSWER = 80

/** A waiting container's error as the kubelet reports it: ImagePullBackOff (the image: the registry's answer), CreateContainerConfigError (why). */
export function waitingError(s: V1ContainerStatus, pod: V1Pod): string | undefined {
  const waiting = s.state?.waiting
  if (!waiting?.reason || PROGRESS_REASONS.has(waiting.reason) || waiting.reason === 'CrashLoopBackOff') return undefined
  const image = s.image || [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].find((c) => c.name === s.name)?.image
  const answer = IMAGE_REASONS.has(waiting.reason) ? pullAnswer(waiting.message) : undefined
  const detail = IMAGE_REASONS.has(waiting.reason) ? (image && answer && !image.endsWith(answer) ? `${image}: ${answer}` : image) : waiting.message
  return detail ? `${waiting.reason} (${cut(detail, MAX_DETAIL)})` : waiting.reason
}

/**
 * Why the scheduler places the pod on no node (the PodScheduled condition): its first sentence, the filters'
 * verdict. What follows is the post-filter's (preemption; in 1.34 "no new claims to deallocate, preemption: …").
 */
export function unschedulable(pod: V1Pod): string | undefined {
  const c = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False')
  if (!c) return undefined
  return cut((c.message ?? c.reason ?? 'Unschedulable').split(/\.\s/)[0].replace(/\.$/, ''), MAX_DETAIL)
}

const terminal = (pod: V1Pod): boolean => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed' || !!pod.metadata?.deletionTimestamp

/** The pod that tells where the Job stands now: the newest that is not over, else the newest. */
export function currentPod(pods: V1Pod[]): V1Pod {
  const newestFirst = [...pods].sort((a, b) => (time(b.metadata?.creationTimestamp) ?? 0) - (time(a.metadata?.creationTimestamp) ?? 0))
  return newestFirst.find((p) => !terminal(p)) ?? newestFirst[0]
}

/**
 * The Job's current pod is on a node with its containers being created (ContainerCreating, no error
 * in its status), no main container of its pods ever ran, and it has been trying for stuck-after:
 * neverStarted() calls that progress; only its Events can say otherwise (stuck-events.ts).
 */
export function creatingPast(job: StartFacts, pods: V1Pod[], now: Date, stuckAfterSeconds: number): boolean {
  if (pods.length === 0 || pods.some(podRan) || (job.status?.succeeded ?? 0) > 0) return false
  const first = Math.min(...pods.map((p) => time(p.metadata?.creationTimestamp) ?? now.getTime()))
  if ((now.getTime() - first) / 1000 < stuckAfterSeconds) return false
  const pod = currentPod(pods)
  return scheduled(pod) && !terminal(pod) && (pod.status?.containerStatuses ?? []).some((s) => s.state?.waiting?.reason === 'ContainerCreating')
}

/** The facts of a Job that its pods do not show: when it started, and what its controller counted. */
export type StartFacts = Pick<JobRecord, 'metadata' | 'status'>

/**
 * `never started: <why>` when the Job counts as stuck at `now`: none of its pods ever ran a main
 * container, and it has been trying for at least `stuckAfterSeconds` (since its first pod, or its
 * start when it has none), so a pod created a second ago, or waiting for a node the autoscaler is
 * adding, is not. Undefined when it is not stuck: a main container ran, an init container runs
 * (it may be waiting for a database; a sidecar's running does not count), the pod is on a node
 * with no error reported (a pull or a volume in progress), or it is too early to tell.
 * `pods`: the Job's pods (by controller-uid).
 */
export function neverStarted(job: StartFacts, pods: V1Pod[], now: Date, stuckAfterSeconds: number): string | undefined {
  // A pod that succeeded ran its main containers, even once it is gone.
  if (pods.some(podRan) || (job.status?.succeeded ?? 0) > 0) return undefined
  const since = (seconds: number): boolean => (now.getTime() - seconds) / 1000 >= stuckAfterSeconds
  if (pods.length === 0) {
    // Pods that failed and are gone, or that are on their way: no pod is no proof.
    const { active, failed } = job.status ?? {}
    if ((active ?? 0) > 0 || (failed ?? 0) > 0) return undefined
    const started = time(job.status?.startTime) ?? time(job.metadata?.creationTimestamp)
    if (started === undefined || !since(started)) return undefined
    return `never started: no pod in ${formatDuration((now.getTime() - started) / 1000)} (the Job's events say why: a quota, an admission webhook…)`
  }
  const first = Math.min(...pods.map((p) => time(p.metadata?.creationTimestamp) ?? now.getTime()))
  if (!since(first)) return undefined
  const pod = currentPod(pods)
  const why = unschedulable(pod) ?? failedInit(pods, pod)
  if (why) return `never started: ${why}`
  const sidecar = sidecars(pod)
  for (const s of pod.status?.initContainerStatuses ?? []) {
    const error = waitingError(s, pod)
    if (error) return `never started: ${sidecar.has(s.name) ? 'sidecar' : 'init'} container ${s.name}: ${error}`
    // Running without a failure: it may be waiting for something that is coming up. A sidecar
    // runs as long as the pod does: its running is not the main containers' progress.
    if (s.state?.running && !sidecar.has(s.name)) return undefined
  }
  for (const s of pod.status?.containerStatuses ?? []) {
    const error = waitingError(s, pod)
    if (error) return `never started: ${error}`
  }
  const age = formatDuration((now.getTime() - first) / 1000)
  if (pod.status?.phase === 'Failed')
    return `never started: pod ${pod.metadata?.name} failed (${cut(pod.status.reason ?? pod.status.message ?? 'no reason given', MAX_DETAIL)})`
  // On a node with no error reported: its image is being pulled (a large one takes minutes) or its
  // volumes attached or provisioned. That is progress, however long: the wait's own timeout bounds it.
  if (scheduled(pod)) return undefined
  const waiting = pod.status?.containerStatuses?.find((s) => s.state?.waiting?.reason)?.state?.waiting?.reason
  return `never started: Pending for ${age}${waiting ? ` (${waiting})` : ''}`
}
