// The run's cancellation. A signal reaches the launcher's main thread (src/launch/engine-thread.ts),
// never the engine's worker thread: the launcher posts `{ cancel: 'SIGINT' }` to it, and this
// turns that message into the one AbortSignal the run carries (run.ts → Lease, execute, waits).
import { parentPort } from 'node:worker_threads'
import { RunCancelled } from './kube/retry.ts'

/** The run's AbortSignal, aborted with a RunCancelled once the launcher forwards SIGINT or SIGTERM. */
export function runCancellation(): AbortSignal {
  const controller = new AbortController()
  parentPort?.on('message', (message: { cancel?: string }) => {
    if (typeof message?.cancel === 'string' && !controller.signal.aborted) controller.abort(new RunCancelled(`the run was cancelled (${message.cancel})`))
  })
  // Listening must not keep the thread alive once the run is over.
  parentPort?.unref()
  return controller.signal
}
