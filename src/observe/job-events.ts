// What the Events of a Job and of its pods add to why it failed or never started. The statuses
// say what (ImagePullBackOff, BackoffLimitExceeded); the Events often say why: the registry's
// answer to a pull ("Failed to pull image …: not found"), a volume that does not mount, the
// quota or webhook that refused the Job's pods (FailedCreate). Only the Warnings that explain a
// failure are used, newest first, a few and cut short, and none that the statuses already say.
// Pure: the Events and the words from the statuses are parameters.
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node'
import { cut } from '../text/shorten.ts'

/** The Event reasons that explain a failure: the kubelet's, the scheduler's, the Job controller's. */
const EXPLAINING = new Set([
  'Failed', // the kubelet: "Failed to pull image …" (its other Failed Events repeat the status: "Error: ErrImagePull")
  'FailedScheduling',
  'FailedMount',
  'FailedAttachVolume',
  'FailedCreatePodSandBox',
  'Evicted',
  'FailedCreate', // the Job controller could not create a pod: a quota, an admission webhook
  'BackoffLimitExceeded',
  'DeadlineExceeded'
])
/** Reasons a status carries under the same name: said once the status words name them. */
const STATUS_REASONS = new Set(['Evicted', 'BackoffLimitExceeded', 'DeadlineExceeded'])
/** Events quoted at most, and the length of each message quoted (the Event has it whole). */
const MAX_EVENTS = 3
const MAX_MESSAGE = 200
/** The newest pods whose Events are read (a Job that failed 6 times says the same 6 times). */
const MAX_PODS = 3

/** When the Event was last seen (its newest timestamp of those an Event may carry), in ms; 0 when none. */
export const eventTime = (e: CoreV1Event): number => {
  const at = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp
  return at === undefined ? 0 : new Date(at as Date | string).getTime()
}

/** The UIDs whose Events explain the Job: its own, and its newest pods'. */
export function explainingUids(jobUid: string, pods: V1Pod[]): string[] {
  const created = (p: V1Pod): number => new Date(p.metadata?.creationTimestamp ?? 0).getTime()
  const newest = [...pods].sort((a, b) => created(b) - created(a)).slice(0, MAX_PODS)
  return [jobUid, ...newest.flatMap((p) => (p.metadata?.uid ? [p.metadata.uid] : []))]
}

/** The message's first sentence (the scheduler's verdict before its preemption details). */
const firstSentence = (message: string): string => message.split(/\.\s/)[0].replace(/\.$/, '')

function explains(e: CoreV1Event): boolean {
  if (e.type !== 'Warning' || !e.reason || !EXPLAINING.has(e.reason)) return false
  return e.reason !== 'Failed' || (e.message ?? '').startsWith('Failed to pull image')
}

/** Whether the words from the statuses already say what the Event says. */
function alreadySaid(e: CoreV1Event, said: string): boolean {
  if (STATUS_REASONS.has(e.reason ?? '') && said.includes(e.reason ?? '')) return true
  const message = firstSentence(e.message ?? '')
  return message !== '' && said.includes(cut(message, MAX_MESSAGE).replace(/…$/, ''))
}

/**
 * `Events: pod P Failed: Failed to pull image "x": not found; …`: what the Events add to `said`
 * (the words from the statuses), newest first; undefined when they add nothing.
 */
export function eventWords(events: CoreV1Event[], said = ''): string | undefined {
  const seen = new Set<string>()
  const quoted: string[] = []
  for (const e of [...events].sort((a, b) => eventTime(b) - eventTime(a))) {
    if (!explains(e) || alreadySaid(e, said)) continue
    const what = `${e.involvedObject?.kind === 'Job' ? 'Job' : 'pod'} ${e.involvedObject?.name ?? ''}`
    const words = `${what} ${e.reason}: ${cut((e.message ?? '').replace(/\s+/g, ' ').trim(), MAX_MESSAGE)}`
    // A pod's Events repeat (one per backoff): the same words once.
    if (seen.has(`${e.reason}: ${e.message}`)) continue
    seen.add(`${e.reason}: ${e.message}`)
    quoted.push(words)
    if (quoted.length === MAX_EVENTS) break
  }
  return quoted.length === 0 ? undefined : `Events: ${quoted.join('; ')}`
}

/** `said` with what the Events add after it, or either alone. */
export function withEvents(said: string | undefined, events: CoreV1Event[]): string | undefined {
  const added = eventWords(events, said)
  if (said && added) return `${said}; ${added}`
  return said ?? added
}
