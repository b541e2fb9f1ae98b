// A Clock the test moves (src/kube/clock.ts): time stands still until advance() or settle() moves
// it, and every sleep due on the way wakes in order, its continuation run before the next one.
// A wait-timeout of 10 minutes then takes a few milliseconds.
import type { Clock } from '../../src/kube/clock.ts'
import { cancelledBy } from '../../src/kube/retry.ts'

interface Sleeper {
  due: number
  /** Order of the sleep() calls, so sleepers due at the same time wake as real timers would. */
  seq: number
  wake: () => void
}

/** Lets every continuation that is ready run: promise callbacks, and what they start in turn. */
export async function flush(): Promise<void> {
  // setImmediate runs after the microtask queue is empty; a few rounds let chains of awaits settle,
  // and the last one waits for a real macrotask, so a write to disk can finish too.
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setTimeout(resolve, 1))
}

export class FakeClock implements Clock {
  private t: number
  private seq = 0
  private readonly sleepers = new Set<Sleeper>()

  constructor(start = new Date('2026-06-01T12:00:00Z')) {
    this.t = start.getTime()
  }

  now(): number {
    return this.t
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(cancelledBy(signal))
    return new Promise((resolve, reject) => {
      const sleeper: Sleeper = {
        due: this.t + Math.max(0, ms),
        seq: this.seq++,
        wake: () => {
          signal?.removeEventListener('abort', cancel)
          resolve()
        }
      }
      const cancel = (): void => {
        this.sleepers.delete(sleeper)
        reject(cancelledBy(signal as AbortSignal))
      }
      signal?.addEventListener('abort', cancel, { once: true })
      this.sleepers.add(sleeper)
    })
  }

  /** How many sleeps are pending (a test can check that nothing is left waiting). */
  get pending(): number {
    return this.sleepers.size
  }

  /** The earliest pending sleep. */
  private next(): Sleeper | undefined {
    let first: Sleeper | undefined
    for (const s of this.sleepers) if (!first || s.due < first.due || (s.due === first.due && s.seq < first.seq)) first = s
    return first
  }

  /** Moves time forward by `ms`, waking each sleep due on the way and letting what it started run. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms
    await flush()
    for (let s = this.next(); s && s.due <= end; s = this.next()) {
      this.sleepers.delete(s)
      this.t = Math.max(this.t, s.due)
      s.wake()
      await flush()
    }
    this.t = end
    await flush()
  }

  /**
   * Runs `work` to its end: whenever nothing else is ready to run, time jumps to the next pending
   * sleep. Fails if `work` is still pending after `limitMs` of fake time (a wait that never ends).
   */
  async settle<T>(work: Promise<T>, limitMs = 7 * 86_400_000): Promise<T> {
    let done = false
    const watched = work.finally(() => {
      done = true
    })
    watched.catch(() => undefined)
    const limit = this.t + limitMs
    await flush()
    while (!done) {
      const s = this.next()
      if (!s || s.due > limit) throw new Error(`still pending after ${limitMs} ms of fake time, with ${this.sleepers.size} sleep(s) pending`)
      this.sleepers.delete(s)
      this.t = Math.max(this.t, s.due)
      s.wake()
      await flush()
    }
    return watched
  }
}
