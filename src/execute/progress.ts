// Progress on long waits: one short line every 15 s, with counts and a few names, never a list
// that grows with the number of Jobs.
import { formatDuration } from '../text/duration.ts'

const EVERY_MS = 15_000

/** Prints `line()` every 15 s until the returned function is called. */
export function startProgress(info: (message: string) => void, line: () => string): () => void {
  const started = Date.now()
  const timer = setInterval(() => info(`${formatDuration((Date.now() - started) / 1000)}: ${line()}`), EVERY_MS)
  timer.unref()
  return () => clearInterval(timer)
}
