// The action and the CLI run their engine in a worker thread of the same process, for one reason:
// a bounded young generation. Node 24 lets V8 grow the main thread's young generation to 128 MB
// while a run allocates answer after answer: a prune of 1,000 Jobs peaked at 247 MB resident, of
// which the old generation was 34 MB. A worker's `resourceLimits` bound it; the action's runtime
// (`runs.using: node24`) takes no Node flags, and V8 ignores the option when set at run time. The
// old generation is left unbounded: a run that needs more (a very large sweep) grows, never aborts.
import { setFlagsFromString } from 'node:v8'
import { Worker } from 'node:worker_threads'

/** The young generation's size, in MB (`npm run bench` measures the prune with it). */
export const YOUNG_GENERATION_MB = 8

/**
 * How far the old generation may grow past what the last full collection left, in percent. V8's own
 * choice lets it grow to about three times that while the run allocates list page after list page,
 * whose parsed Jobs are garbage once trimmed: a dry-run sweep of 50,000 Jobs peaked at 205-234 MB
 * resident, and at 173-174 MB with 50% (`npm run bench`, the sweep plan).
 */
export const HEAP_GROWING_PERCENT = 50

/**
 * After SIGINT or SIGTERM, how long the engine has to stop, release its Lease and write its report
 * before the process exits anyway. GitHub sends SIGTERM 7.5 s after SIGINT, and SIGKILL 2.5 s later.
 */
export const CANCEL_DEADLINE_MS = 6_000

/**
 * Runs the ES module `entry` with this process's arguments in a worker thread; its output is this
 * process's, and its exit code (process.exitCode, or 1 when it throws) becomes this process's.
 * Signals reach this thread only: SIGINT or SIGTERM is passed on to the engine (src/cancel.ts),
 * which stops and reports; a second signal, or CANCEL_DEADLINE_MS (or the deadline the engine
 * posted, `{ cancelDeadlineMs }`: the keeper's), ends the process anyway.
 */
export function runEngine(entry: URL): void {
  // V8 reads this at each full collection, in every isolate, so it reaches the worker created next
  // (the young generation's size, fixed when an isolate is made, needs resourceLimits instead).
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`)
  const worker = new Worker(entry, {
    argv: process.argv.slice(2),
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB }
  })
  worker.on('error', (e: Error) => {
    process.stderr.write(`${e.stack ?? e.message}\n`)
    process.exitCode = 1
  })
  let cancelled = false
  // The keeper says how long its stop may take (its --shutdown-grace, and time to release its Lease).
  let deadlineMs = CANCEL_DEADLINE_MS
  worker.on('message', (message: { cancelDeadlineMs?: unknown }) => {
    if (typeof message?.cancelDeadlineMs === 'number' && message.cancelDeadlineMs > 0) deadlineMs = message.cancelDeadlineMs
  })
  const stop = (why: string): void => {
    process.stderr.write(`job-sweeper: stopped ${why}, before the cancelled run had finished\n`)
    process.exit(1)
  }
  const cancel = (signal: NodeJS.Signals): void => {
    if (cancelled) return stop(`at a second signal (${signal})`)
    cancelled = true
    worker.postMessage({ cancel: signal })
    setTimeout(() => stop(`${deadlineMs / 1000}s after ${signal}`), deadlineMs).unref()
  }
  process.on('SIGINT', cancel)
  process.on('SIGTERM', cancel)
  // `job-sweeper keeper` runs until SIGTERM (a Deployment's pod): that is its normal stop.
  const runsUntilStopped = process.argv[2] === 'keeper'
  worker.on('exit', (code) => {
    process.exitCode ||= code
    // Cancelled: the run ends non-zero even if it had nothing left to do.
    if (cancelled && !runsUntilStopped) process.exitCode ||= 1
  })
}
