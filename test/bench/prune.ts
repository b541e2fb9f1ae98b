// Prune benchmark: N finished Jobs of release `app` in each of three namespaces, cleared side by
// side by `job-sweeper pre`, by the CI step people write instead (`kubectl delete jobs -l … --wait`),
// and by N raw DELETEs at job-sweeper's concurrency (the API server's own limit here). All three
// talk to the API server directly; requests are counted by each client: job-sweeper's --json
// (api-requests), kubectl's -v=6 log (one "Response" line per request), the raw loop itself. Not
// through the fault proxy: its HTTP/1.1 hop does not keep a connection alive after a DELETE with a
// body, which would charge each of job-sweeper's precondition deletes a TLS handshake.
import { BatchV1Api, CoreV1Api, KubeConfig, Observable, type RequestContext, type ResponseContext } from '@kubernetes/client-node'
import type { Cluster } from '../cluster/cluster.ts'
import { helmAnnotations, type TestJob } from '../cluster/testenv.ts'
import { checkLeft, createDecoyJobs } from './decoys.ts'
import { createFinishedJobs } from './finished-jobs.ts'
import { CLI, measure, mustSucceed, settle, type Measured } from './measure.ts'

/** What the prune benchmark measured. */
export interface PruneFigures {
  jobs: number
  /** Creating the 3 × N finished Jobs (and their pods running to completion). */
  setupMs: number
  sweeper: Measured & { requests: number }
  kubectl: Measured & { requests: number }
  raw: { wallMs: number; requests: number; concurrency: number }
  /** Decoys beside job-sweeper's targets, every one checked to be still there with its UID. */
  decoys: number
}

const RELEASE = 'app'
const LABELS = { 'app.kubernetes.io/instance': RELEASE }

/** Jobs beside the targets that no one may touch: another release, a hook of `app`, a running Job. */
function decoys(namespace: string): TestJob[] {
  return [
    { namespace, name: 'other-release-migrate', annotations: helmAnnotations('other', namespace) },
    { namespace, name: 'app-pre-upgrade-hook', labels: LABELS, annotations: helmAnnotations(RELEASE, namespace, 'pre-upgrade') },
    { namespace, name: 'unrelated-running', behaviour: 'hold' }
  ]
}

async function rawDeletes(kc: KubeConfig, namespace: string, names: string[], concurrency: number): Promise<number> {
  const batch = kc.makeApiClient(BatchV1Api)
  // The fastest a client can go: one connection pool for all requests (client-node makes one per
  // request unless told otherwise, as job-sweeper's client does).
  let pool: ReturnType<RequestContext['getDispatcher']>
  const shared = {
    middleware: [
      {
        pre: (ctx: RequestContext) => {
          pool ??= ctx.getDispatcher()
          if (pool) ctx.setDispatcher(pool)
          return new Observable(Promise.resolve(ctx))
        },
        post: (response: ResponseContext) => new Observable(Promise.resolve(response))
      }
    ],
    middlewareMergeStrategy: 'append' as const
  }
  const started = performance.now()
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < names.length) {
      const name = names[next++]
      await batch.deleteNamespacedJob({ name, namespace, propagationPolicy: 'Background' }, shared)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return performance.now() - started
}

export async function benchPrune(cluster: Cluster, n: number, log: (line: string) => void): Promise<PruneFigures> {
  const kc = new KubeConfig()
  kc.loadFromFile(cluster.kubeconfig)
  const core = kc.makeApiClient(CoreV1Api)
  const batch = kc.makeApiClient(BatchV1Api)
  const stamp = Date.now()
  const [nsSweeper, nsKubectl, nsRaw] = ['sweeper', 'kubectl', 'raw'].map((who) => `bench-prune-${who}-${stamp}`)
  try {
    for (const namespace of [nsSweeper, nsKubectl, nsRaw]) await core.createNamespace({ body: { metadata: { name: namespace } } })
    const setupStarted = performance.now()
    const created = await Promise.all(
      [nsSweeper, nsKubectl, nsRaw].map((namespace) =>
        createFinishedJobs(kc, namespace, n, { prefix: 'app-migrate', labels: LABELS, annotations: helmAnnotations(RELEASE, namespace), concurrency: 20, log })
      )
    )
    const setupMs = performance.now() - setupStarted
    const decoyJobs = decoys(nsSweeper)
    const kept = await createDecoyJobs(batch, decoyJobs)
    log(`${3 * n} finished Jobs set up in ${(setupMs / 1000).toFixed(1)}s`)

    const env = { KUBECONFIG: cluster.kubeconfig }
    await settle(log)
    log('job-sweeper pre …')
    const sweeperRun = mustSucceed(
      'job-sweeper pre',
      await measure([...CLI, 'pre', '--namespace', nsSweeper, '--release', RELEASE, '--harvest-logs', 'none', '--on-running', 'fail', '--json'], env)
    )
    const sweeper = { ...sweeperRun, requests: (JSON.parse(sweeperRun.stdout) as { 'api-requests': number })['api-requests'] }

    await settle(log)
    log('kubectl delete jobs --wait …')
    const kubectlRun = mustSucceed(
      'kubectl delete',
      await measure([`${cluster.binDir}/kubectl`, 'delete', 'jobs', '-n', nsKubectl, '-l', `app.kubernetes.io/instance=${RELEASE}`, '--wait', '-v=6'], env)
    )
    const kubectl = { ...kubectlRun, requests: kubectlRun.stderr.split('\n').filter((l) => l.includes('"Response"')).length }

    await settle(log)
    log('raw DELETEs …')
    const concurrency = 8 // job-sweeper's default concurrency
    const rawMs = await rawDeletes(kc, nsRaw, created[2].names, concurrency)
    const raw = { wallMs: rawMs, requests: created[2].names.length, concurrency }

    // Every target gone, every decoy still there with its UID: the figures count only if the work was right.
    await checkLeft(batch, nsSweeper, kept, 'the prune')
    await checkLeft(batch, nsKubectl, [], 'the prune')
    await checkLeft(batch, nsRaw, [], 'the prune')
    return { jobs: n, setupMs, sweeper, kubectl, raw, decoys: decoyJobs.length }
  } finally {
    for (const namespace of [nsSweeper, nsKubectl, nsRaw]) await core.deleteNamespace({ name: namespace }).catch(() => undefined)
  }
}
