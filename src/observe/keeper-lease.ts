// With keeper-namespace: whether a job-sweeper keeper is running, from its Lease (job-sweeper-keeper,
// which the leading keeper renews every 10 s and annotates with what it keeps), watched on this
// run's clock until it changes or its duration passes without a change (plan/lease-liveness.ts):
// its renewTime is on the keeper's clock, and is never measured against this run's.
// Post adds the keeper's finalizer only to the Jobs such a keeper takes (plan/keeper.ts keeperTakes);
// pre and sweep let go of the holds no keeper runs to release (plan/keeper.ts orphanedHold).
import type { V1Lease } from '@kubernetes/client-node'
import type { Clock } from '../kube/clock.ts'
import type { JobsClient } from '../kube/jobs-client.ts'
import { apiErrorMessage, statusCode } from '../kube/errors.ts'
import { KEEPER_LEASE, KEEPER_SCOPE_ANNOTATION, LEASE_DURATION_SECONDS, observationOf, type LeaseObservation } from '../kube/lease.ts'
import { ClusterUnreachable } from '../kube/retry.ts'
import { INPUT } from '../settings/inputs.ts'

/**
 * What the reads of the keeper's Lease tell:
 * - `renewed`: it changed between two reads (renewed, or taken by another keeper): a keeper runs;
 * - `free`: nobody holds it (released, or deleted while watched): no keeper;
 * - `stale`: held, and unchanged for `watchedSeconds`, its duration, by this run's clock: no keeper.
 */
export type LeaseLiveness =
  { running: true; state: 'renewed'; watchedSeconds: number } | { running: false; state: 'free' } | { running: false; state: 'stale'; watchedSeconds: number }

/** A keeper's Lease as a phase reads it: who holds it, whether it renews it, and what it keeps. */
export interface KeeperLease {
  holder?: string
  /** How long it lasts after a renewal. */
  durationSeconds: number
  /** Whether a keeper renews it, as this run watched it (readKeeperLease); undefined: not watched to the end. */
  liveness?: LeaseLiveness
  namespaces: string[]
  selector?: string
}

/** The keeper's Lease as a phase read it: none there (`lease` undefined), or it could not be read (`unread`). */
export interface KeeperPresence {
  namespace: string
  lease?: KeeperLease
  unread?: boolean
}

/** The keeper's Lease in `namespace` as post reads it: undefined when there is none. */
export function keeperLeaseOf(lease: V1Lease | undefined): KeeperLease | undefined {
  if (lease === undefined) return undefined
  const annotations = lease.metadata?.annotations ?? {}
  return {
    holder: lease.spec?.holderIdentity || undefined,
    durationSeconds: lease.spec?.leaseDurationSeconds ?? LEASE_DURATION_SECONDS,
    namespaces: (annotations[KEEPER_SCOPE_ANNOTATION.namespaces] ?? '').split(',').filter((n) => n !== ''),
    selector: annotations[KEEPER_SCOPE_ANNOTATION.selector]
  }
}

/** A watch of the keeper's Lease reads it this often: five reads to one renewal of the keeper's (RENEW_EVERY_MS). */
export const KEEPER_WATCH_POLL_MS = 2_000

/** How a phase watches the keeper's Lease. */
export interface KeeperWatch {
  /** The clock the reads are timed on: this run's, never the keeper's. */
  clock: Clock
  /** What the reads so far tell (plan/lease-liveness.ts leaseLiveness: passed in, as observe sits below plan). */
  decide: (observations: LeaseObservation[], durationSeconds: number) => LeaseLiveness | undefined
  /** Where the one line goes that says the run watches (only when the first read does not settle it). */
  info: (line: string) => void
  /** Ends the watch early (the run cancelled, or the answer no longer needed): the liveness stays undefined. */
  signal?: AbortSignal
}

/**
 * Reads the keeper's Lease, and while it is held re-reads it until it changes (a keeper renews it:
 * within about 10 s) or its duration passes by this run's clock without a change (none does: 30 s);
 * the first change ends the watch. A refusal (403: no `get` on leases there) or another API error
 * is a warning, and then post adds no finalizer, and pre and sweep let go of no hold. Only an
 * unreachable cluster throws.
 */
export async function readKeeperLease(
  client: JobsClient,
  namespace: string,
  warn: (message: string) => void,
  post: boolean,
  watch: KeeperWatch
): Promise<KeeperPresence> {
  const { clock, decide, info, signal } = watch
  try {
    const first = await client.getLease(namespace, KEEPER_LEASE)
    let lease = keeperLeaseOf(first)
    if (lease === undefined) return { namespace }
    // Our keeper writes 30 s and renews every 10 s whatever the Lease says: a longer duration
    // written by hand is not waited out.
    const seconds = Math.min(lease.durationSeconds, LEASE_DURATION_SECONDS)
    const observations = [observationOf(first, clock.now())]
    let liveness = decide(observations, seconds)
    if (liveness === undefined) info(`${INPUT.keeperNamespace} '${namespace}': watching the keeper's Lease ${KEEPER_LEASE} for a renewal (up to ${seconds}s)…`)
    while (liveness === undefined) {
      const due = observations[0].at + seconds * 1000 - clock.now()
      const slept = await clock.sleep(Math.max(0, Math.min(KEEPER_WATCH_POLL_MS, due)), signal).then(
        () => true,
        () => false // ended early: nothing decided
      )
      if (!slept) break
      const again = await client.getLease(namespace, KEEPER_LEASE)
      observations.push(observationOf(again, clock.now()))
      lease = keeperLeaseOf(again) ?? lease
      liveness = decide(observations, seconds)
    }
    return { namespace, lease: { ...lease, liveness } }
  } catch (e) {
    if (e instanceof ClusterUnreachable) throw e
    const code = statusCode(e)
    warn(
      `${INPUT.keeperNamespace} '${namespace}': cannot read the keeper's Lease ${KEEPER_LEASE} (${code === undefined ? '' : `${code} `}${apiErrorMessage(e)}${code === 403 ? "; the credentials need 'get' on leases there" : ''}): ${post ? 'no Job is held for the keeper' : 'no hold of the keeper’s is let go'}`
    )
    return { namespace, unread: true }
  }
}
