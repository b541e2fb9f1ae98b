// Whether the keeper's Lease is renewed, decided on this run's clock alone, as client-go's leader
// election decides: its renewTime is written on the keeper's clock, and a runner whose clock is
// 30 s off would read a live keeper as dead, or a dead one as alive. What counts is whether the
// Lease changes (holder, renewTime or resourceVersion) between reads this run times itself: the
// keeper renews it every 10 s, so a live one is seen renewing within about 10 s, and a Lease that
// does not change for its whole duration by this run's clock has no keeper behind it.
import { changedBetween, type LeaseObservation } from '../kube/lease.ts'
import type { LeaseLiveness } from '../observe/keeper-lease.ts'

export type { LeaseLiveness }

/**
 * The keeper's liveness from reads of its Lease in the order made (`at` on this run's clock), or
 * undefined while they do not tell yet: held, and unchanged for less than `durationSeconds`.
 */
export function leaseLiveness(observations: LeaseObservation[], durationSeconds: number): LeaseLiveness | undefined {
  const first = observations[0]
  const last = observations.at(-1)
  if (first === undefined || last === undefined) return undefined
  if (last.holder === undefined) return { running: false, state: 'free' }
  const watchedSeconds = Math.round((last.at - first.at) / 1000)
  if (observations.some((o, i) => i > 0 && changedBetween(observations[i - 1], o))) return { running: true, state: 'renewed', watchedSeconds }
  return last.at - first.at >= durationSeconds * 1000 ? { running: false, state: 'stale', watchedSeconds } : undefined
}
