// Jest global setup: reuse the cluster of `npm run cluster:up` when one answers, else start a
// private one for this run (stopped again in global-teardown.ts). Workers inherit process.env.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { clusterEnv, pinnedVersions, runningCluster, startCluster, stopCluster } from './cluster.ts'
import { realNodeHost } from './node.ts'
import { settlePrerequisites, skippedReport, thisHost } from './prerequisites.ts'

export default async function globalSetup(): Promise<void> {
  const shared = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '.cluster')
  let cluster = await runningCluster(shared)
  const pinned = pinnedVersions()
  if (cluster && (cluster.version !== pinned.kubernetes || cluster.helmVersion !== pinned.helm)) {
    // A cluster of another set of versions (JOB_SWEEPER_VERSIONS) would test the wrong thing.
    console.error(
      `\nnot using the running cluster in ${shared}: it runs ${cluster.version} with Helm ${cluster.helmVersion}, the ${pinned.set} set is ${pinned.kubernetes} with Helm ${pinned.helm}`
    )
    cluster = undefined
  }
  if (cluster) {
    console.error(`\nusing the running cluster in ${shared}`)
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'job-sweeper-cluster-'))
    process.env.JOB_SWEEPER_PRIVATE_CLUSTER = dir
    console.error('')
    cluster = await startCluster(dir, (line) => console.error(line))
  }
  Object.assign(process.env, clusterEnv(cluster), { JOB_SWEEPER_CLUSTER: JSON.stringify(cluster) })
  // The outside tools: a missing one's tests are skipped and said here, and again at the end (global-teardown.ts); under CI=true it fails the run.
  try {
    const skipped = skippedReport(settlePrerequisites(cluster.realNodeSkipped, thisHost(realNodeHost())))
    if (skipped) console.error(skipped)
  } catch (e) {
    const dir = process.env.JOB_SWEEPER_PRIVATE_CLUSTER
    if (dir) {
      await stopCluster(dir)
      rmSync(dir, { recursive: true, force: true })
    }
    throw e
  }
}
