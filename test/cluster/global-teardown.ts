// Jest global teardown: stop the private cluster global-setup.ts started (never a shared one), then
// name what the tests left open: jest runs them in this process, and an open handle here is what
// keeps it from exiting (jest.config.js's forceExit hides it).
import { rmSync } from 'node:fs'
import { stopCluster } from './cluster.ts'

export default async function globalTeardown(): Promise<void> {
  const dir = process.env.JOB_SWEEPER_PRIVATE_CLUSTER
  if (dir) {
    await stopCluster(dir)
    rmSync(dir, { recursive: true, force: true })
  }
  const open = process.getActiveResourcesInfo()
  if (open.length > 0) console.error(`\nstill open after every test (what would keep jest from exiting): ${open.join(', ')}\n${openHandles().join('\n')}`)
}

/** The objects behind the open handles, as far as they say what they are (a socket's state and addresses). */
function openHandles(): string[] {
  const handles = (process as unknown as { _getActiveHandles(): object[] })._getActiveHandles()
  return handles.map((h) => {
    const s = h as { destroyed?: boolean; readyState?: string; localPort?: number; remoteAddress?: string; remotePort?: number; _handle?: unknown }
    return `  ${h.constructor.name}: destroyed=${s.destroyed} readyState=${s.readyState} handle=${s._handle ? 'yes' : 'none'} local=${s.localPort} remote=${s.remoteAddress}:${s.remotePort}`
  })
}
