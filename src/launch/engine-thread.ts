// The action and the CLI run their engine in a worker thread of the same process, for one reason:
// a bounded young generation. Node 24 lets V8 grow the young generation of the main thread to
// 128 MB while a run allocates response after response, and that alone took a prune of 1,000 Jobs
// from 90 MB to 220 MB resident. A worker's `resourceLimits` bound it; the action's runtime
// (`runs.using: node24`) takes no Node flags, and an option set at run time has no effect. The old
// generation is left unbounded: a run that needs more (a very large sweep) grows, it never aborts.
import { Worker } from 'node:worker_threads'

/** The young generation's size, in MB: past about 8 a run grows, below it scavenges cost time. */
export const YOUNG_GENERATION_MB = 8

/**
 * Runs the ES module `entry` with this process's arguments in a worker thread; its output is this
 * process's, and its exit code (process.exitCode, or 1 when it throws) becomes this process's.
 */
export function runEngine(entry: URL): void {
  const worker = new Worker(entry, {
    argv: process.argv.slice(2),
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB }
  })
  worker.on('error', (e: Error) => {
    process.stderr.write(`${e.stack ?? e.message}\n`)
    process.exitCode = 1
  })
  worker.on('exit', (code) => {
    process.exitCode ||= code
  })
}
