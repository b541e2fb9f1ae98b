// Keeper benchmark, two parts.
// - Catching up: the logs (64 KiB each: kwok's LOG_64K_CONTAINER) and job.json of N finished Jobs
//   archived to the cluster's S3 server, side by side with the same bytes PUT raw by the same SDK
//   at the keeper's concurrency, and with what a user would script instead: `kubectl logs
//   job/<name>` for each Job, then an upload. The keeper (the bundled CLI) starts over the N Jobs,
//   holds each, archives it and lets it go; it is timed until one watch has seen every Job carry
//   its archive annotation. The CPU each process of the cluster (and the keeper) spent meanwhile
//   is read from /proc: the machine's cores are shared by all, so they bound what any keeper could do.
//   Beside it on the same Jobs (issue 34), the minimal lossless loop and the no-protection floor
//   (minimal-loop.ts): a plain script making only the requests any tool that loses no log must
//   make, and the same without the hold and the release. Every S3 request of each is counted at the
//   wire, by a proxy in front of the S3 server (s3-counter.ts); each starts on a settled machine.
// - Keeping up: the keeper runs first; N Jobs are created suspended (each held while it waits),
//   then all let run at once. Per Job, the time from its Complete condition to its archive
//   annotation, both as one watch sees them: the median and the 99th percentile.
// Peak RSS is the process's VmHWM; requests come from its /metrics (job_sweeper_keeper_api_requests_total).
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { BatchV1Api, CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, Watch, type V1Job } from '@kubernetes/client-node'
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { ARCHIVE_ANNOTATION, LOGS_FINALIZER } from '../../src/plan/keeper.ts'
import type { Cluster } from '../cluster/cluster.ts'
import { LOG_64K, LOG_64K_CONTAINER } from '../cluster/kwok.ts'
import { recordedPid } from '../cluster/processes.ts'
import { S3_SERVER, s3Env } from '../cluster/s3.ts'
import { jobManifest } from '../cluster/testenv.ts'
import { createFinishedJobs } from './finished-jobs.ts'
import { CLI, settle } from './measure.ts'

export interface KeeperFigures {
  jobs: number
  setupMs: number
  keeper: { wallMs: number; peakRssMb: number; requests: number; bytes: number; cpu: CpuSeconds; s3: S3Counts }
  raw: { wallMs: number; objects: number; concurrency: number; cpu: CpuSeconds; s3: S3Counts }
  /** The minimal lossless loop and the no-protection floor (minimal-loop.ts), over the same Jobs. */
  loop: Script
  floor: Script
  /** CPU of the S3 request counter over the keeper, the raw PUTs, the loop and the floor (not counted in theirs). */
  counterCpuSeconds: number
  script: { wallMs: number; jobs: number }
  /** Keeping up: N Jobs let run at once under a running keeper. */
  live: { jobs: number; watched: number; backgroundSetupMs: number; medianMs: number; p99Ms: number; maxMs: number; peakRssMb: number }
}

/** CPU seconds (user and system) each process spent over a stretch, by name. */
export type CpuSeconds = Record<string, number>

/** Requests the S3 server received, by `METHOD what` (s3-counter.ts). */
export type S3Counts = Record<string, number>

/** A run of minimal-loop.ts: its time (spawn to exit), the Jobs it did, the requests it made to each server, the CPU spent. */
export interface Script {
  wallMs: number
  jobs: number
  api: number
  s3: S3Counts
  cpu: CpuSeconds
}

/** All the requests of `counts`. */
export const s3Total = (counts: S3Counts): number => Object.values(counts).reduce((a, b) => a + b, 0)

/** The cluster's processes whose CPU the catch-up is measured by (the machine's cores are shared by all). */
const CLUSTER_PROCESSES: Record<string, string> = {
  'kube-apiserver': '2-kube-apiserver',
  etcd: '1-etcd',
  kwok: '5-kwok',
  'kube-controller-manager': '3-kube-controller-manager',
  'S3 server': S3_SERVER
}

/** CPU seconds so far of each pid (utime + stime from /proc/<pid>/stat; 0 once it is gone). */
function cpuOf(pids: Record<string, number>): CpuSeconds {
  const ticks = 100 // USER_HZ, as on every Linux this runs on
  return Object.fromEntries(
    Object.entries(pids).map(([name, pid]) => {
      try {
        const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
          .replace(/^.*\) /s, '')
          .split(' ')
        return [name, (Number(fields[11]) + Number(fields[12])) / ticks]
      } catch {
        return [name, 0]
      }
    })
  )
}

/** What each process spent between two readings of cpuOf. */
const cpuSince = (before: CpuSeconds, after: CpuSeconds): CpuSeconds =>
  Object.fromEntries(Object.entries(after).map(([name, seconds]) => [name, seconds - (before[name] ?? 0)]))

const MANAGED = { 'job-sweeper.io/managed': 'true' }
const CONCURRENCY = Number(process.env.BENCH_KEEPER_CONCURRENCY ?? 4)
/** Keeping up: the Jobs the keeper watches besides (archived already, suspended: no pods), so its memory is a watch of this many. */
const WATCHED = Number(process.env.BENCH_KEEPER_WATCH_JOBS ?? 50_000)
/** The label of the Jobs let run at once (the others are the watched background). */
const LIVE = { 'job-sweeper.bench/live': 'true' }
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
  let running: ReturnType<typeof startKeeper> | undefined
  const counter = await startCounter(cluster.s3.endpoint)
  const counted = new S3Client({
    endpoint: counter.endpoint,
    region: cluster.s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: credentials.AWS_ACCESS_KEY_ID, secretAccessKey: credentials.AWS_SECRET_ACCESS_KEY }
  })
  try {
    await core.createNamespace({ body: { metadata: { name: ns } } })
    const setupStarted = performance.now()
    const { names } = await createFinishedJobs(kc, ns, n, { prefix: 'archive', labels: MANAGED, container: LOG_64K_CONTAINER, log })
    const setupMs = performance.now() - setupStarted

    // The keeper, until every Job carries where its logs went.
    const pids = Object.fromEntries(Object.entries(CLUSTER_PROCESSES).map(([name, file]) => [name, recordedPid(cluster.dir, file)]))
    const counterBefore = cpuOf({ counter: counter.pid }).counter
    await settle(log, { maxMs: 60_000 })
    // Seen through one watch (from the list's version), not lists polled: a list of N Jobs every
    // 250 ms would cost the API server a part of the CPU it shares with the keeper.
    const archived = new Set<string>()
    const list = await batch.listNamespacedJob({ namespace: ns, limit: 1 })
    const watching = await new Watch(kc).watch(
      `/apis/batch/v1/namespaces/${ns}/jobs`,
      { resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true },
      (_type: string, job: V1Job) => {
        if (job.metadata?.annotations?.[ARCHIVE_ANNOTATION.where] !== undefined) archived.add(job.metadata.name ?? '')
      },
      () => undefined
    )
    let s3Before = await counter.counts()
    const started = performance.now()
    running = startKeeper(cluster, env, ns, `s3://${cluster.s3.bucket}/${prefix}/keeper`, counter.endpoint)
    const before = cpuOf({ ...pids, keeper: running.pid })
    let wallMs: number
    try {
      for (;;) {
        if (archived.size === n) break
        running.check()
        if (performance.now() - started > 600_000) throw new Error(`${archived.size} of ${n} Jobs archived after 10 minutes`)
        await sleep(50)
      }
      wallMs = performance.now() - started
    } finally {
      watching.abort()
    }
    const cpu = cpuSince(before, cpuOf({ ...pids, keeper: running.pid }))
    const { peakRssMb, metric } = await running.stop()
    let s3After = await counter.counts()
    const keeper = {
      wallMs,
      peakRssMb,
      cpu,
      requests: metric('job_sweeper_keeper_api_requests_total'),
      bytes: metric('job_sweeper_keeper_archived_log_bytes_total'),
      s3: countsSince(s3Before, s3After)
    }
    log(`keeper: ${n} Jobs archived in ${(wallMs / 1000).toFixed(1)} s`)

    // The same objects PUT raw: each Job's log and a job.json of the keeper's size, at its concurrency.
    const logBody = Buffer.from(LOG_64K)
    const jobJson = Buffer.alloc(1200, 'x')
    await settle(log, { maxMs: 60_000 })
    s3Before = await counter.counts()
    const rawBefore = cpuOf(pids)
    const rawStarted = performance.now()
    await pool(names, CONCURRENCY, async (name) => {
      await counted.send(new PutObjectCommand({ Bucket: cluster.s3.bucket, Key: `${prefix}/raw/${name}/${LOG_64K_CONTAINER}.log`, Body: logBody }))
      await counted.send(new PutObjectCommand({ Bucket: cluster.s3.bucket, Key: `${prefix}/raw/${name}/job.json`, Body: jobJson }))
    })
    const rawWallMs = performance.now() - rawStarted
    const rawCpu = cpuSince(rawBefore, cpuOf(pids))
    s3After = await counter.counts()
    const raw = { wallMs: rawWallMs, objects: 2 * n, concurrency: CONCURRENCY, cpu: rawCpu, s3: countsSince(s3Before, s3After) }

    // The minimal lossless loop, then the no-protection floor, over the same (finished, released) Jobs.
    const script = async (mode: 'loop' | 'floor'): Promise<Script> => {
      await settle(log, { maxMs: 60_000 })
      const before = await counter.counts()
      const cpuBefore = cpuOf(pids)
      const ran = await runMinimal(mode, env, ns, counter.endpoint, `s3://${cluster.s3.bucket}/${prefix}/${mode}`)
      const cpuAfter = cpuOf(pids)
      if (ran.jobs !== n) throw new Error(`the ${mode} did ${ran.jobs} of ${n} Jobs`)
      log(`keeper: the minimal ${mode} did ${n} Jobs in ${(ran.wallMs / 1000).toFixed(1)} s`)
      return {
        wallMs: ran.wallMs,
        jobs: ran.jobs,
        api: ran.api,
        s3: countsSince(before, await counter.counts()),
        cpu: { ...cpuSince(cpuBefore, cpuAfter), [mode === 'loop' ? 'the loop' : 'the floor']: ran.cpuSeconds }
      }
    }
    const loop = await script('loop')
    const floor = await script('floor')
    const counterCpuSeconds = cpuOf({ counter: counter.pid }).counter - counterBefore

    // What a user would script: kubectl logs per Job, then an upload, one Job after another.
    const sample = names.slice(0, Math.min(SCRIPT_SAMPLE, n))
    const scriptStarted = performance.now()
    for (const name of sample) {
      const logs = spawnSync('kubectl', ['logs', `job/${name}`, '-n', ns], { env, maxBuffer: 64 * 1024 * 1024 })
      if (logs.status !== 0) throw new Error(`kubectl logs job/${name}: ${logs.stderr.toString()}`)
      await s3.send(new PutObjectCommand({ Bucket: cluster.s3.bucket, Key: `${prefix}/script/${name}.log`, Body: logs.stdout }))
    }
    const kubectlScript = { wallMs: ((performance.now() - scriptStarted) * n) / sample.length, jobs: sample.length }
    const live = await keepingUp(cluster, kc, env, `${ns}-live`, `s3://${cluster.s3.bucket}/${prefix}/live`, n, log)
    return { jobs: n, setupMs, keeper, raw, loop, floor, counterCpuSeconds, script: kubectlScript, live }
  } finally {
    await running?.stop().catch(() => undefined)
    s3.destroy()
    counted.destroy()
    counter.stop()
    await core.deleteNamespace({ name: ns }).catch(() => undefined)
  }
}

/** What the S3 server received between two readings of the counter. */
const countsSince = (before: S3Counts, after: S3Counts): S3Counts =>
  Object.fromEntries(Object.entries(after).flatMap(([what, count]) => (count - (before[what] ?? 0) > 0 ? [[what, count - (before[what] ?? 0)]] : [])))

/** The S3 request counter (s3-counter.ts) in front of `endpoint`, as a process of its own. */
async function startCounter(endpoint: string): Promise<{ endpoint: string; pid: number; counts: () => Promise<S3Counts>; stop: () => void }> {
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', join(import.meta.dirname, 's3-counter.ts'), endpoint], {
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const address = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      if (out.includes('\n')) resolve(out.trim())
    })
    child.on('close', (code) => reject(new Error(`the S3 request counter exited ${code}`)))
  })
  return {
    endpoint: address,
    pid: child.pid ?? 0,
    counts: async () => (await (await fetch(`${address}/__counts`)).json()) as S3Counts,
    stop: () => void child.kill('SIGTERM')
  }
}

/** minimal-loop.ts in `mode` over the Jobs of `namespace`, as its own process: its time from spawn to exit, and what it printed. */
async function runMinimal(
  mode: 'loop' | 'floor',
  env: Record<string, string | undefined>,
  namespace: string,
  endpoint: string,
  logsDir: string
): Promise<{ wallMs: number; jobs: number; api: number; bytes: number; cpuSeconds: number }> {
  const started = performance.now()
  const child = spawn(
    process.execPath,
    [
      '--disable-warning=ExperimentalWarning',
      join(import.meta.dirname, 'minimal-loop.ts'),
      mode,
      namespace,
      Object.entries(MANAGED)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
      endpoint,
      logsDir,
      String(CONCURRENCY)
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] }
  )
  let out = ''
  let err = ''
  child.stdout.on('data', (c: Buffer) => (out += c.toString()))
  child.stderr.on('data', (c: Buffer) => (err += c.toString()))
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)))
  const wallMs = performance.now() - started
  if (code !== 0) throw new Error(`minimal-loop.ts ${mode} exited ${code}: ${err.slice(-2000)}`)
  return { wallMs, ...(JSON.parse(out) as { jobs: number; api: number; bytes: number; cpuSeconds: number }) }
}

/** The bundled keeper on `namespace`, archiving to `logsDir` (through `s3Endpoint`); `stop` reads its peak RSS and /metrics, then stops it (SIGTERM, exit 0). */
function startKeeper(
  cluster: Cluster,
  env: Record<string, string | undefined>,
  namespace: string,
  logsDir: string,
  s3Endpoint = cluster.s3.endpoint
): { pid: number; check: () => void; stop: () => Promise<{ peakRssMb: number; metric: (name: string) => number }> } {
  const child = spawn(
    CLI[0],
    [
      ...CLI.slice(1),
      'keeper',
      '--namespace',
      namespace,
      '--lease-namespace',
      namespace,
      '--listen',
      '127.0.0.1:0',
      '--concurrency',
      String(CONCURRENCY),
      '--logs-dir',
      logsDir,
      '--s3-endpoint',
      s3Endpoint
    ],
    { env, stdio: ['ignore', 'ignore', 'pipe'] }
  )
  let output = ''
  child.stderr.on('data', (c: Buffer) => (output += c.toString()))
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)))
  let stopping: Promise<{ peakRssMb: number; metric: (name: string) => number }> | undefined
  const stop = async (): Promise<{ peakRssMb: number; metric: (name: string) => number }> => {
    const peakRssMb = Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024
    const address = /keeper: serving on (\S+)/.exec(output)?.[1]
    const metrics = await (await fetch(`http://${address}/metrics`)).text()
    child.kill('SIGTERM')
    if ((await exited) !== 0) throw new Error(`the keeper did not stop cleanly: ${output.slice(-2000)}`)
    return { peakRssMb, metric: (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN) }
  }
  return {
    pid: child.pid ?? 0,
    check: () => {
      if (child.exitCode !== null) throw new Error(`the keeper exited: ${output.slice(-2000)}`)
    },
    stop: () => (stopping ??= stop().finally(() => child.kill('SIGKILL')))
  }
}

/** The q-quantile (0..1) of `values`, nearest rank. */
const quantile = (values: number[], q: number): number => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(q * values.length) - 1)]

/**
 * Keeping up: WATCHED Jobs of its scope, archived already and suspended (no pods), are there when
 * the keeper starts, so it watches them all; then `n` Jobs are created suspended (each held by the
 * keeper while it waits), and all let run at once; per Job, the time from its Complete condition
 * to its archive annotation, both as one watch sees them; the keeper's peak RSS over it all.
 */
async function keepingUp(
  cluster: Cluster,
  kc: KubeConfig,
  env: Record<string, string | undefined>,
  ns: string,
  logsDir: string,
  n: number,
  log: (line: string) => void
): Promise<KeeperFigures['live']> {
  const core = kc.makeApiClient(CoreV1Api)
  const batch = kc.makeApiClient(BatchV1Api)
  await core.createNamespace({ body: { metadata: { name: ns } } })
  const backgroundStarted = performance.now()
  const background = Array.from({ length: WATCHED }, (_, i) => `watched-${i}`)
  await pool(background, 50, async (name) => {
    const body = jobManifest({ namespace: ns, name, behaviour: 'succeed', labels: MANAGED })
    body.spec = { ...body.spec!, suspend: true }
    const made = await batch.createNamespacedJob({ namespace: ns, body })
    // Archived as the keeper notes it: the folder ends with the Job's uid, known once it exists (a
    // note without it is not the keeper's, and the keeper would hold the Job).
    const annotations = { [ARCHIVE_ANNOTATION.where]: `${logsDir}/${ns}/${name}/${made.metadata?.uid}/`, [ARCHIVE_ANNOTATION.state]: 'complete' }
    await batch.patchNamespacedJob({ namespace: ns, name, body: { metadata: { annotations } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))
  })
  const backgroundSetupMs = performance.now() - backgroundStarted
  if (WATCHED > 0) log(`keeper: ${WATCHED} archived Jobs to watch created in ${(backgroundSetupMs / 1000).toFixed(1)} s`)
  const running = startKeeper(cluster, env, ns, logsDir)
  const completeAt = new Map<string, number>()
  const archivedAt = new Map<string, number>()
  let watching: { abort: () => void } | undefined
  try {
    const names = Array.from({ length: n }, (_, i) => `live-${String(i).padStart(String(n - 1).length, '0')}`)
    await pool(names, 50, async (name) => {
      const body = jobManifest({ namespace: ns, name, behaviour: 'succeed', labels: { ...MANAGED, ...LIVE } })
      for (const c of body.spec?.template.spec?.containers ?? []) c.name = LOG_64K_CONTAINER
      body.spec = { ...body.spec!, suspend: true }
      await batch.createNamespacedJob({ namespace: ns, body })
    })
    const held = async (): Promise<number> =>
      (await batch.listNamespacedJob({ namespace: ns, labelSelector: 'job-sweeper.bench/live=true' })).items.filter((j) =>
        j.metadata?.finalizers?.includes(LOGS_FINALIZER)
      ).length
    for (let waited = 0; (await held()) < n; waited += 250) {
      running.check()
      if (waited > 300_000) throw new Error(`the keeper held ${await held()} of ${n} suspended Jobs after 5 minutes`)
      await sleep(250)
    }
    const { resourceVersion } = (await batch.listNamespacedJob({ namespace: ns, limit: 1 })).metadata ?? {}
    watching = await new Watch(kc).watch(
      `/apis/batch/v1/namespaces/${ns}/jobs`,
      { resourceVersion, allowWatchBookmarks: true },
      (type: string, job: V1Job) => {
        const name = job.metadata?.name ?? ''
        const now = performance.now()
        if (!completeAt.has(name) && job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True')) completeAt.set(name, now)
        if (!archivedAt.has(name) && job.metadata?.annotations?.[ARCHIVE_ANNOTATION.where] !== undefined) archivedAt.set(name, now)
      },
      () => undefined
    )
    log(`keeper: ${n} suspended Jobs held; letting them run`)
    await pool(names, 50, async (name) => {
      await batch.patchNamespacedJob({ namespace: ns, name, body: [{ op: 'replace', path: '/spec/suspend', value: false }] })
    })
    for (let waited = 0; archivedAt.size < n; waited += 250) {
      running.check()
      if (waited > 600_000) throw new Error(`${archivedAt.size} of ${n} Jobs archived after 10 minutes`)
      await sleep(250)
    }
    const latencies = names.map((name) => (archivedAt.get(name) ?? NaN) - (completeAt.get(name) ?? NaN))
    if (latencies.some((l) => !(l >= 0))) throw new Error('a Job was archived before the watch saw it Complete')
    const { peakRssMb, metric } = await running.stop()
    // It held the n live Jobs and nothing of what it only watches (else it measured holding those).
    const holds = metric('job_sweeper_keeper_holds_total')
    if (holds !== n) throw new Error(`the keeper held ${holds} Jobs, not the ${n} live ones`)
    log(`keeper: ${n} Jobs archived as they finished`)
    return {
      jobs: n,
      watched: WATCHED,
      backgroundSetupMs,
      medianMs: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
      maxMs: Math.max(...latencies),
      peakRssMb
    }
  } finally {
    watching?.abort()
    await running.stop().catch(() => undefined)
    await core.deleteNamespace({ name: ns }).catch(() => undefined)
  }
}
