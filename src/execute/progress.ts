// Progress on long waits: one short line every 15 s, with counts and a few names, never a list
// that grows with the number of Jobs.
import { realClock, type Clock } from '../kube/clock.ts'
import { formatDuration } from '../text/duration.ts'

const EVERY_MS = 15_000

/** Prints `line()` every 15 s until the returned function is called. */
export function startProgress(info: (message: string) => void, line: () => string, clock: Clock = realClock): () => void {
  const started = clock.now()
  const stopped = new AbortController()
  const next = (): void =>
    void clock.sleep(EVERY_MS, stopped.signal, true).then(
      () => {
        info(`${formatDuration((clock.now() - started) / 1000)}: ${line()}`)
        next()
      },
      () => undefined // stopped
    )
  next()
  return () => stopped.abort()
}
