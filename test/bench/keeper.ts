// Keeper benchmark: the logs and job.json of N finished Jobs archived to the cluster's S3 server,
// side by side with the same bytes PUT raw by the same SDK at the keeper's concurrency (the floor),
// and with what a user would script instead: `kubectl logs job/<name>` for each Job, then an
// upload. The keeper (the bundled CLI) starts over the N Jobs, holds each, archives it and lets it
// go; it is timed until every Job carries its archive annotation. Peak RSS is the process's
// VmHWM; requests come from its /metrics (job_sweeper_keeper_api_requests_total).
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { BatchV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node'
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import type { Cluster } from '../cluster/cluster.ts'
import { s3Env } from '../cluster/s3.ts'
import { createFinishedJobs } from './finished-jobs.ts'
import { CLI } from './measure.ts'

export interface KeeperFigures {
  jobs: number
  setupMs: number
  keeper: { wallMs: number; peakRssMb: number; requests: number; bytes: number }
  raw: { wallMs: number; objects: number; concurrency: number }
  script: { wallMs: number; jobs: number }
}

const MANAGED = { 'job-sweeper.io/managed': 'true' }
const CONCURRENCY = Number(process.env.BENCH_KEEPER_CONCURRENCY ?? 4)
/** The script baseline runs on this many Jobs and is scaled to N (a kubectl process per Job is slow). */
const SCRIPT_SAMPLE = 100

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++])
    })
  )
}

export async function benchKeeper(cluster: Cluster, n: number, log: (line: string) => void): Promise<KeeperFigures> {
  const kc = new KubeConfig()
  kc.loadFromFile(cluster.kubeconfig)
  const core = kc.makeApiClient(CoreV1Api)
  const batch = kc.makeApiClient(BatchV1Api)
  const credentials = s3Env(cluster.s3)
  const env: Record<string, string | undefined> = {
    ...process.env,
    KUBECONFIG: cluster.kubeconfig,
    PATH: `${cluster.binDir}:${process.env.PATH ?? ''}`,
    ...credentials
  }
  const s3 = new S3Client({
    endpoint: cluster.s3.endpoint,
    region: cluster.s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: credentials.AWS_ACCESS_KEY_ID, secretAccessKey: credentials.AWS_SECRET_ACCESS_KEY }
  })
  const stamp = Date.now()
  const ns = `bench-keeper-${stamp}`
  const prefix = `bench-keeper-${stamp}`
  try {
    await core.createNamespace({ body: { metadata: { name: ns } } })
    const setupStarted = performance.now()
    const { names } = await createFinishedJobs(kc, ns, n, { prefix: 'archive', labels: MANAGED, log })
    const setupMs = performance.now() - setupStarted

    // The keeper, until every Job carries where its logs went.
    const started = performance.now()
    const child = spawn(
      CLI[0],
      [
        ...CLI.slice(1),
        'keeper',
        '--namespace',
        ns,
        '--lease-namespace',
        ns,
        '--listen',
        '127.0.0.1:0',
        '--concurrency',
        String(CONCURRENCY),
        '--logs-dir',
        `s3://${cluster.s3.bucket}/${prefix}/keeper`,
        '--s3-endpoint',
        cluster.s3.endpoint
      ],
      {
        env,
        stdio: ['ignore', 'ignore', 'pipe']
      }
    )
    let output = ''
    child.stderr.on('data', (c: Buffer) => (output += c.toString()))
    const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)))
    for (;;) {
      const jobs = (await batch.listNamespacedJob({ namespace: ns })).items
      const archived = jobs.filter((j) => j.metadata?.annotations?.['job-sweeper.io/logs'] !== undefined).length
      if (archived === n) break
      if (child.exitCode !== null) throw new Error(`the keeper exited: ${output.slice(-2000)}`)
      if (performance.now() - started > 600_000) throw new Error(`${archived} of ${n} Jobs archived after 10 minutes`)
      await sleep(250)
    }
    const wallMs = performance.now() - started
    const peakRssMb = Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024
    const address = /keeper: serving on (\S+)/.exec(output)?.[1]
    const metrics = await (await fetch(`http://${address}/metrics`)).text()
    const metric = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN)
    child.kill('SIGTERM')
    if ((await exited) !== 0) throw new Error(`the keeper did not stop cleanly: ${output.slice(-2000)}`)
    const keeper = {
      wallMs,
      peakRssMb,
      requests: metric('job_sweeper_keeper_api_requests_total'),
      bytes: metric('job_sweeper_keeper_log_bytes_archived_total')
    }
    log(`keeper: ${n} Jobs archived in ${(wallMs / 1000).toFixed(1)} s`)

    // The same bytes PUT raw: each Job's log and a job.json of the keeper's size, at its concurrency.
    const logBody = Buffer.from(readFileSync(new URL('../cluster/pod.log', import.meta.url)))
    const jobJson = Buffer.alloc(1200, 'x')
    const rawStarted = performance.now()
    await pool(names, CONCURRENCY, async (name) => {
      await s3.send(new PutObjectCommand({ Bucket: cluster.s3.bucket, Key: `${prefix}/raw/${name}/main.log`, Body: logBody }))
      await s3.send(new PutObjectCommand({ Bucket: cluster.s3.bucket, Key: `${prefix}/raw/${name}/job.json`, Body: jobJson }))
    })
    const raw = { wallMs: performance.now() - rawStarted, objects: 2 * n, concurrency: CONCURRENCY }

    // What a user would script: kubectl logs per Job, then an upload, one Job after another.
    const sample = names.slice(0, Math.min(SCRIPT_SAMPLE, n))
    const scriptStarted = performance.now()
    for (const name of sample) {
      const logs = spawnSync('kubectl', ['logs', `job/${name}`, '-n', ns], { env, maxBuffer: 64 * 1024 * 1024 })
      if (logs.status !== 0) throw new Error(`kubectl logs job/${name}: ${logs.stderr.toString()}`)
      await s3.send(new PutObjectCommand({ Bucket: cluster.s3.bucket, Key: `${prefix}/script/${name}.log`, Body: logs.stdout }))
    }
    const script = { wallMs: ((performance.now() - scriptStarted) * n) / sample.length, jobs: sample.length }
    return { jobs: n, setupMs, keeper, raw, script }
  } finally {
    s3.destroy()
    await core.deleteNamespace({ name: ns }).catch(() => undefined)
  }
}
