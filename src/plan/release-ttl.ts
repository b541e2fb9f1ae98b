// The TTL starts after the archive. Where a keeper runs for a Job, post writes no
// ttlSecondsAfterFinished: the TTL controller deletes with foreground propagation (the garbage
// collector deletes the pods first, and the keeper's finalizer on the Job does not hold them), so a
// TTL that fires while the keeper is down, behind or waiting on the store would take the logs
// before their archive. Post records the TTL by outcome on the Job instead (this annotation), and
// whoever removes the hold (the keeper once it archived, its give-up, --let-go, pre or sweep for an
// orphaned hold) writes ttlSecondsAfterFinished in the same patch. Pure: the decision of which TTL.
import type { JobRecord } from '../kube/job-record.ts'
import { formatDuration, parseDuration } from '../text/duration.ts'
import { finishedAt, isFinished, jobStatus } from './predicates.ts'

/** The TTL by outcome post recorded for the one who lets go of the hold: `ttl 1h, failure-grace 1d` (`never` for either). */
export const TTL_AFTER_ARCHIVE = 'job-sweeper.io/ttl-after-archive'

/** A retention in seconds, or null for never (as plan/retention.ts's Retention). */
type Retention = number | null

const word = (r: Retention): string => (r === null ? 'never' : formatDuration(r))

/** The annotation's value for a ttl (succeeded) and a failure-grace (failed). */
export const ttlAfterArchive = (ttl: Retention, failureGrace: Retention): string => `ttl ${word(ttl)}, failure-grace ${word(failureGrace)}`

function parse(text: string): Retention | undefined {
  if (text === 'never') return null
  return parseDuration(text)
}

/** What to write when the hold is let go. */
export interface ReleaseTtl {
  /** ttlSecondsAfterFinished (counted by the TTL controller from the Job's finish), or null: none (never). */
  ttlSeconds: number | null
  /** What is left of it at `now` (0: the TTL controller deletes the Job at once); undefined while it runs. */
  leftSeconds?: number
  /** In words, for the log line of the release. */
  words: string
}

/**
 * The TTL to write as the hold on `job` is let go at `now`, or undefined when post recorded none
 * (the Job's TTL, if any, is already in its spec). The outcome's: ttl for a Job that succeeded,
 * failure-grace for one that failed, the larger of the two for one that has not finished (let go
 * while it runs). The field is written whole: the TTL controller counts it from the Job's finish,
 * so the time already passed since is taken off by the controller itself (taking it off here too
 * would count it twice); `leftSeconds` says what remains, never below 0. An annotation that cannot
 * be read (edited by hand) gives no TTL, and says so: a sweep enforces the retention then.
 */
export function ttlAtRelease(job: JobRecord, now: Date): ReleaseTtl | undefined {
  const recorded = job.metadata?.annotations?.[TTL_AFTER_ARCHIVE]
  if (recorded === undefined) return undefined
  const m = /^ttl (\S+), failure-grace (\S+)$/.exec(recorded.trim())
  const [ttl, grace] = m ? [parse(m[1]), parse(m[2])] : [undefined, undefined]
  if (ttl === undefined || grace === undefined) {
    return { ttlSeconds: null, words: `no TTL written: its annotation ${TTL_AFTER_ARCHIVE} '${recorded}' is not 'ttl <duration>, failure-grace <duration>'` }
  }
  const status = jobStatus({ ...job, metadata: { ...job.metadata, deletionTimestamp: undefined } })
  if (!isFinished(job)) {
    const bound = ttl === null || grace === null ? null : Math.max(ttl, grace)
    return { ttlSeconds: bound, words: `ttlSecondsAfterFinished ${bound ?? 'none'} (not finished: the larger of ${recorded})` }
  }
  const [which, retention] = status === 'succeeded' ? ['ttl', ttl] : ['failure-grace', grace]
  if (retention === null) return { ttlSeconds: null, words: `no TTL (${which} is never)` }
  const at = finishedAt(job)
  const left = at === undefined ? retention : Math.max(0, retention - Math.max(0, (now.getTime() - at.getTime()) / 1000))
  const rest = left > 0 ? `${formatDuration(left)} left` : 'expired: deleted at once'
  return { ttlSeconds: retention, leftSeconds: left, words: `ttlSecondsAfterFinished ${retention} (${status}: ${which} ${formatDuration(retention)}, ${rest})` }
}

/** What post writes of a Job's TTL: the field (null removes it), and the TTL by outcome it leaves to the hold's release. */
export interface PostTtl {
  /** ttlSecondsAfterFinished, or null: none (the field removed). */
  ttlSeconds: number | null
  /** The value of TTL_AFTER_ARCHIVE, when the TTL is left to whoever lets go of the hold. */
  afterArchive?: string
  /** In words, for post's log line. */
  words: string
}

/**
 * Post's TTL for a Job (`ttl`: the one it decided, the outcome's or the upper bound while the Job
 * runs; `byOutcome`: ttl and failure-grace as the Job's policy gives them). Held for a keeper
 * (`held`), the Job gets no TTL now, only its policy by outcome, written as the field by whoever
 * lets go of the hold after the archive. Not held (no keeper runs for it): the TTL at once, as
 * ever. `never` (or none while keep-last keeps it) has nothing to wait for.
 */
export function postTtl(ttl: Retention, byOutcome: { ttl: Retention; failureGrace: Retention }, held: boolean): PostTtl {
  if (!held || ttl === null) return { ttlSeconds: ttl, words: `ttlSecondsAfterFinished ${ttl ?? 'removed (never)'}` }
  const afterArchive = ttlAfterArchive(byOutcome.ttl, byOutcome.failureGrace)
  return {
    ttlSeconds: null,
    afterArchive,
    words: `no ttlSecondsAfterFinished until the keeper archived its logs (${TTL_AFTER_ARCHIVE}: ${afterArchive}, the one of its outcome written as its hold is let go)`
  }
}
