// Jest global teardown: stop the private cluster global-setup.ts started (never a shared one), then
// name what jest's main process still holds (with two workers, jest's own worker processes and
// their pipes until it ends them; run in band, whatever the tests left open). What a suite leaves
// open in a worker is named suite by suite (suite-environment.ts). If jest still has not exited a
// while later, the exit watchdog says where its main thread is and fails the run (no forceExit: a
// leak ends the run loudly, not quietly).
import { rmSync } from 'node:fs'
import { stopCluster } from './cluster.ts'
import { armExitWatchdog } from './exit-watchdog.ts'
import { skippedReport, skippedTools } from './prerequisites.ts'

/** How long jest may take to exit after this teardown before the watchdog names what keeps it. */
const EXIT_GRACE_MS = 30_000

export default async function globalTeardown(): Promise<void> {
  const dir = process.env.JOB_SWEEPER_PRIVATE_CLUSTER
  if (dir) {
    await stopCluster(dir)
    rmSync(dir, { recursive: true, force: true })
  }
  // The tests skipped for want of an outside tool, said again after jest's own summary.
  const skipped = skippedReport(Object.values(skippedTools()))
  if (skipped) console.error(skipped)
  const open = process.getActiveResourcesInfo()
  if (open.length > 0) console.error(`\nstill open in jest's main process after the teardown: ${open.join(', ')}\n${openHandles().join('\n')}`)
  armExitWatchdog(EXIT_GRACE_MS)
}

/** The objects behind the open handles, as far as they say what they are (a socket's state and addresses). */
function openHandles(): string[] {
  const handles = (process as unknown as { _getActiveHandles(): object[] })._getActiveHandles()
  return handles.map((h) => {
    const s = h as { destroyed?: boolean; readyState?: string; localPort?: number; remoteAddress?: string; remotePort?: number; _handle?: unknown }
    return `  ${h.constructor.name}: destroyed=${s.destroyed} readyState=${s.readyState} handle=${s._handle ? 'yes' : 'none'} local=${s.localPort} remote=${s.remoteAddress}:${s.remotePort}`
  })
}
