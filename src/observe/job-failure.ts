// Why a Job failed, in the words a person watching the deploy reads: the Job controller's reason
// (BackoffLimitExceeded, DeadlineExceeded, a pod failure policy) and what its pods show (a
// container OOMKilled or its exit code, an image not pulled, a pod evicted or past its deadline),
// then what their Events add (job-events.ts). Pure: the Job, its pods and their Events are
// parameters; pod-start.ts words the pods that never started.
import type { CoreV1Event, V1ContainerStatus, V1Pod } from '@kubernetes/client-node'
import type { JobRecord } from '../kube/job-record.ts'
import { cut } from '../text/shorten.ts'
import { withEvents } from './job-events.ts'
import { waitingError } from './pod-start.ts'

/** A pod's message quoted in a reason is cut here (the pod has it whole). */
const MAX_DETAIL = 200

/** What the Job controller's reasons mean, for the ones a user meets most. */
const JOB_REASONS: Record<string, string> = {
  BackoffLimitExceeded: 'its pods failed more often than backoffLimit allows',
  DeadlineExceeded: 'it ran longer than activeDeadlineSeconds',
  PodFailurePolicy: 'a pod failure policy rule failed it',
  MaxFailedIndexesExceeded: 'more indexes failed than maxFailedIndexes allows',
  FailedIndexes: 'some of its indexes failed'
}

const time = (value: Date | string | undefined): number => (value === undefined ? 0 : new Date(value).getTime())

/** A container's failure: OOMKilled, its exit code, or the error it waits on (an image not pulled). */
function containerFailure(s: V1ContainerStatus, pod: V1Pod): string | undefined {
  const ended = s.state?.terminated ?? s.lastState?.terminated
  if (ended && ended.exitCode !== 0) {
    const code = `exit code ${ended.exitCode}${ended.signal ? `, signal ${ended.signal}` : ''}`
    return ended.reason && ended.reason !== 'Error' ? `${ended.reason} (${code})` : code
  }
  return waitingError(s, pod)
}

/** What the newest pod that shows a failure says: `pod P: container C OOMKilled (exit code 137)`. */
function podFailure(pods: V1Pod[]): string | undefined {
  const newestFirst = [...pods].sort((a, b) => time(b.metadata?.creationTimestamp) - time(a.metadata?.creationTimestamp))
  for (const pod of newestFirst) {
    const name = pod.metadata?.name
    const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]
    const failures = statuses.flatMap((s) => {
      const f = containerFailure(s, pod)
      return f ? [`container ${s.name} ${f}`] : []
    })
    if (failures.length > 0) return `pod ${name}: ${failures.join(', ')}`
    // The kubelet fails a whole pod for its own reasons: Evicted, DeadlineExceeded (the pod's activeDeadlineSeconds).
    if (pod.status?.phase === 'Failed' && (pod.status.reason || pod.status.message))
      return `pod ${name}: ${pod.status.reason ?? ''}${pod.status.message ? ` (${cut(pod.status.message, MAX_DETAIL)})` : ''}`.trim()
  }
  return undefined
}

/**
 * Why the Job failed, in words, or undefined when it did not fail (or nothing says why): the Job
 * controller's reason first, then what its pods show; either alone when the other says nothing;
 * then what the Job's and its pods' `events` add.
 */
export function failureReason(job: JobRecord, pods: V1Pod[], events: CoreV1Event[] = []): string | undefined {
  const failed = job.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True')
  const reason = failed?.reason
  const jobWords = reason ? (JOB_REASONS[reason] ? `${reason} (${JOB_REASONS[reason]})` : reason) : undefined
  const podWords = podFailure(pods)
  return withEvents(jobWords && podWords ? `${jobWords}; ${podWords}` : (jobWords ?? podWords), events)
}
