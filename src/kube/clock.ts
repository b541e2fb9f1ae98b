// The time the executor, the Lease and the informer read and wait on: a parameter, as the planner's
// `now` is, so that their branches (a wait that times out, a Lease that expires, a watch that
// fails for the whole budget) are tested on a clock the test moves (test/fake/clock.ts), as
// Kubernetes tests its Job controller with newControllerFromClientWithClock.
import { sleep } from './retry.ts'

/** Now, and a wait, from one source. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
  /**
   * Resolves after `ms`; rejects with RunCancelled at once when `signal` is (or becomes) aborted.
   * A `background` wait (a Lease renewal, a progress line) does not keep the process alive.
   */
  sleep(ms: number, signal?: AbortSignal, background?: boolean): Promise<void>
}

/** The machine's clock and timers. */
export const realClock: Clock = { now: () => Date.now(), sleep }
