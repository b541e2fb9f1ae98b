// Setting up benchmarks: thousands of finished Jobs (one pod each) in one namespace, created with
// bounded concurrency and run to completion by the real job controller and kwok.
//
// As a script: scripts/node24 test/bench/finished-jobs.ts [N=3000] — times N Jobs on the running
// cluster of `npm run cluster:up`, or on a private one it starts and stops.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BatchV1Api, CoreV1Api, KubeConfig, Watch, type V1Job } from '@kubernetes/client-node'
import { pinnedVersions, runningCluster, startCluster, stopCluster, type Cluster } from '../cluster/cluster.ts'
import { jobManifest, type PodBehaviour } from '../cluster/testenv.ts'

/** How createFinishedJobs makes its Jobs. */
export interface FinishedJobsOptions {
  /** Job names are `<prefix>-<index>`, index zero-padded. Default `job`. */
  prefix?: string
  /** How each Job's pod ends. Default succeed. */
  behaviour?: Exclude<PodBehaviour, 'hold'>
  labels?: Record<string, string>
  /** For example a release's `meta.helm.sh/release-name` and `…-namespace`. */
  annotations?: Record<string, string>
  /** The container's name (kwok's log for it: LOG_64K_CONTAINER logs 64 KiB). Default `main`. */
  container?: string
  /** Create requests in flight at once. Default 50. */
  concurrency?: number
  /** Give up waiting for the Jobs to finish after this long. Default 10 minutes. */
  timeoutMs?: number
  /** Progress lines (counts only). */
  log?: (line: string) => void
}

/** What createFinishedJobs did, and how long each half took. */
export interface FinishedJobs {
  names: string[]
  /** Milliseconds until every create request was answered. */
  createdMs: number
  /** Milliseconds from the first request until every Job was Complete (or Failed). */
  finishedMs: number
}

/**
 * Resolves once `n` distinct Jobs whose names start with `prefix-` carry `condition`, from one
 * watch on the namespace: polling lists of thousands of Jobs would cost more CPU than the
 * controllers it waits for, on the small machines tests run on.
 */
async function watchFinished(
  kc: KubeConfig,
  namespace: string,
  prefix: string,
  n: number,
  condition: 'Complete' | 'Failed',
  log: (line: string) => void
): Promise<Watching> {
  const finished = new Set<string>()
  let resolveDone: () => void = () => {}
  let rejectDone: (e: unknown) => void = () => {}
  const done = new Promise<void>((resolve, reject) => {
    resolveDone = resolve
    rejectDone = reject
  })
  let request: { abort: () => void } | undefined
  let stopped = false
  const start = async (resourceVersion?: string): Promise<void> => {
    request = await new Watch(kc).watch(
      `/apis/batch/v1/namespaces/${namespace}/jobs`,
      { allowWatchBookmarks: true, ...(resourceVersion ? { resourceVersion } : {}) },
      (type: string, job: V1Job) => {
        if (type === 'BOOKMARK') resourceVersion = job.metadata?.resourceVersion
        if (type !== 'ADDED' && type !== 'MODIFIED') return
        resourceVersion = job.metadata?.resourceVersion
        const name = job.metadata?.name ?? ''
        if (!name.startsWith(`${prefix}-`) || finished.has(name)) return
        if (!job.status?.conditions?.some((c) => c.type === condition && c.status === 'True')) return
        finished.add(name)
        if (finished.size % 500 === 0) log(`${finished.size}/${n} ${condition}`)
        if (finished.size === n) resolveDone()
      },
      (err) => {
        if (stopped || finished.size === n) return
        // The server ends watches now and then: carry on from the last version seen.
        if (!err) start(resourceVersion).catch(rejectDone)
        else rejectDone(err)
      }
    )
  }
  await start()
  return {
    done,
    stop: () => {
      stopped = true
      request?.abort()
    }
  }
}

interface Watching {
  done: Promise<void>
  stop: () => void
}

/**
 * Creates `n` Jobs in `namespace` (which must exist) and resolves once every one has finished.
 * Each Job has `backoffLimit: 0` and one pod that kwok runs to Succeeded (or Failed).
 */
export async function createFinishedJobs(kc: KubeConfig, namespace: string, n: number, options: FinishedJobsOptions = {}): Promise<FinishedJobs> {
  const { prefix = 'job', behaviour = 'succeed', concurrency = 50, timeoutMs = 600_000, log = () => {} } = options
  const batch = kc.makeApiClient(BatchV1Api)
  const width = String(n - 1).length
  const names = Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(width, '0')}`)
  const condition = behaviour === 'fail' ? 'Failed' : 'Complete'
  const watching = await watchFinished(kc, namespace, prefix, n, condition, log)
  const started = performance.now()

  let next = 0
  const worker = async (): Promise<void> => {
    while (next < names.length) {
      const name = names[next++]
      const body = jobManifest({ namespace, name, behaviour, labels: options.labels, annotations: options.annotations })
      if (options.container) for (const c of body.spec?.template.spec?.containers ?? []) c.name = options.container
      await batch.createNamespacedJob({ namespace, body })
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker))
  const createdMs = performance.now() - started
  log(`created ${n} Jobs in ${namespace} in ${(createdMs / 1000).toFixed(1)}s`)

  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not all ${n} Jobs in ${namespace} were ${condition} after ${timeoutMs / 1000}s`)), timeoutMs)
  })
  try {
    await Promise.race([watching.done, timeout])
  } finally {
    clearTimeout(timer)
    watching.stop()
  }
  const finishedMs = performance.now() - started
  log(`all ${n} Jobs ${condition} ${(finishedMs / 1000).toFixed(1)}s after the first create`)
  return { names, createdMs, finishedMs }
}

/** The running cluster of `npm run cluster:up` if its versions are the selected set's, else a private one; `stop` stops only the latter. */
export async function benchCluster(log: (line: string) => void = (l) => console.error(l)): Promise<{ cluster: Cluster; stop: () => Promise<void> }> {
  const shared = await runningCluster(join(import.meta.dirname, '..', '..', '.cluster'))
  const pinned = pinnedVersions()
  if (shared && shared.version === pinned.kubernetes && shared.helmVersion === pinned.helm) return { cluster: shared, stop: async () => {} }
  const dir = mkdtempSync(join(tmpdir(), 'job-sweeper-bench-'))
  const cluster = await startCluster(dir, log)
  return {
    cluster,
    stop: async () => {
      await stopCluster(dir)
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const n = Number(process.argv[2] ?? 3000)
  const { cluster, stop } = await benchCluster()
  const kc = new KubeConfig()
  kc.loadFromFile(cluster.kubeconfig)
  const core = kc.makeApiClient(CoreV1Api)
  const namespace = `bench-setup-${Date.now()}`
  try {
    await core.createNamespace({ body: { metadata: { name: namespace } } })
    const result = await createFinishedJobs(kc, namespace, n, { log: (l) => console.error(l) })
    console.log(
      `${n} finished Jobs on Kubernetes ${cluster.version}: created in ${(result.createdMs / 1000).toFixed(1)}s, all Complete after ${(result.finishedMs / 1000).toFixed(1)}s`
    )
  } finally {
    await core.deleteNamespace({ name: namespace }).catch(() => undefined)
    await stop()
  }
}
