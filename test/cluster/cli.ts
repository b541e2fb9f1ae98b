// npm run cluster:up / cluster:down — a long-lived local cluster in .cluster/ for the demo and
// for running tests repeatedly (jest reuses it instead of starting its own).
import { rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { realNodeEnv, runningCluster, startCluster, stopCluster } from './cluster.ts'
import { s3EnvScript } from './s3.ts'

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '.cluster')

async function up(): Promise<void> {
  const running = await runningCluster(dir)
  const cluster = running ?? (await startCluster(dir, (line) => console.error(line)))
  const env = join(dir, 'env')
  writeFileSync(
    env,
    `export KUBECONFIG='${cluster.kubeconfig}'\nexport PATH='${cluster.binDir}':"$PATH"\n${s3EnvScript(cluster.s3)}${Object.entries(realNodeEnv(cluster))
      .map(([name, value]) => `export ${name}='${value}'\n`)
      .join('')}`
  )
  console.error(
    running ? `cluster already running at ${cluster.server}` : `cluster ${cluster.version} with Helm ${cluster.helmVersion} running at ${cluster.server}`
  )
  console.error(`S3 (versitygw) at ${cluster.s3.endpoint}, bucket ${cluster.s3.bucket}`)
  console.error(
    cluster.realNode
      ? `real node ${cluster.realNode.name} at ${cluster.realNode.address}, registry ${cluster.realNode.registry}`
      : `no real node: ${cluster.realNodeSkipped}`
  )
  console.error(`use it with: source ${env}`)
}

async function down(): Promise<void> {
  const stopped = await stopCluster(dir)
  rmSync(dir, { recursive: true, force: true })
  console.error(stopped.length ? `stopped ${stopped.join(', ')}` : 'no cluster was running')
}

const command = process.argv[2]
if (command === 'up') await up()
else if (command === 'down') await down()
else {
  console.error('usage: cluster.ts up|down')
  process.exit(2)
}
