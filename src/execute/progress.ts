// Progress on long waits: one short line every 15 s, with counts and a few names, never a list
// that grows with the number of Jobs.
import { realClock, type Clock } from '../kube/clock.ts'
import { formatDuration } from '../settings/duration.ts'

const EVERY_MS = 15_000
/** How many names a line shows before its ellipsis. */
export const NAMES_SHOWN = 3

/** "a, b, c …": the first few names of a set, and an ellipsis when there are more. */
export function someNames(names: Iterable<string>): string {
  const shown: string[] = []
  let more = false
  for (const n of names) {
    if (shown.length === NAMES_SHOWN) {
      more = true
      break
    }
    shown.push(n)
  }
  return `${shown.join(', ')}${more ? ' …' : ''}`
}

/** Prints `line()` every 15 s until the returned function is called. */
export function startProgress(info: (message: string) => void, line: () => string, clock: Clock = realClock): () => void {
  const started = clock.now()
  const stopped = new AbortController()
  const next = (): void =>
    void clock.sleep(EVERY_MS, stopped.signal).then(
      () => {
        info(`${formatDuration((clock.now() - started) / 1000)}: ${line()}`)
        next()
      },
      () => undefined // stopped
    )
  next()
  return () => stopped.abort()
}
