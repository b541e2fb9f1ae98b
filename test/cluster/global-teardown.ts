// Jest global teardown: stop the private cluster global-setup.ts started (never a shared one).
import { rmSync } from 'node:fs'
import { stopCluster } from './cluster.ts'

export default async function globalTeardown(): Promise<void> {
  const dir = process.env.JOB_SWEEPER_PRIVATE_CLUSTER
  if (!dir) return
  await stopCluster(dir)
  rmSync(dir, { recursive: true, force: true })
}
