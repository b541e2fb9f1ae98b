// Sweep benchmark, deleting: N finished Jobs whose ttl expired, cleared by a real `job-sweeper
// sweep` and, in a namespace of their own, by N raw DELETEs at job-sweeper's concurrency and
// client-side rate limit. The Jobs are made finished without pods, so that tens of thousands set
// up in a minute or two: spec.managedBy names a controller that is not Kubernetes' Job controller
// (which then leaves them alone), and the benchmark writes their Complete status itself, as such
// a controller would. The sweep's work is the same as for any finished Job: list, decide, DELETE
// with preconditions, and an Event each.
import { BatchV1Api, CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node'
import PQueue from 'p-queue'
import type { Cluster } from '../cluster/cluster.ts'
import { jobManifest, type TestJob } from '../cluster/testenv.ts'
import { DEFAULT_CLIENT_OPTIONS } from '../../src/kube/client.ts'
import { Rest } from '../../src/kube/rest.ts'
import { checkLeft, createDecoyJobs } from './decoys.ts'
import { CLI, measure, mustSucceed, settle, type Measured } from './measure.ts'

/** What the deleting sweep benchmark measured. */
export interface SweepDeleteFigures {
  jobs: number
  setupMs: number
  sweeper: Measured & { requests: number; jsonBytes: number }
  raw: { wallMs: number; requests: number; concurrency: number; requestsPerSecond: number }
  decoys: number
}

const LABEL = 'job-sweeper.io/bench'
const MANAGER = 'job-sweeper.io/bench-controller'
const CONCURRENCY = 8 // job-sweeper's default concurrency

/** Creates `n` finished (Complete, 2h ago) Jobs, their ttl 1s expired, in `namespace`. */
async function finishedWithoutPods(kc: KubeConfig, namespace: string, n: number, log: (line: string) => void): Promise<string[]> {
  const batch = kc.makeApiClient(BatchV1Api)
  const names = Array.from({ length: n }, (_, i) => `done-${String(i).padStart(6, '0')}`)
  const at = new Date(Date.now() - 2 * 3600_000).toISOString()
  const status = {
    status: {
      startTime: at,
      completionTime: at,
      succeeded: 1,
      conditions: [
        { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: at, lastProbeTime: at },
        { type: 'Complete', status: 'True', lastTransitionTime: at, lastProbeTime: at }
      ]
    }
  }
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < names.length) {
      const name = names[next++]
      const body = jobManifest({ namespace, name, labels: { [LABEL]: 'delete' }, annotations: { 'job-sweeper.io/ttl': '1s' }, spec: { managedBy: MANAGER } })
      await batch.createNamespacedJob({ namespace, body })
      await batch.patchNamespacedJobStatus({ namespace, name, body: status }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))
      if (next % 5000 === 0) log(`${next}/${n} finished Jobs in ${namespace}`)
    }
  }
  await Promise.all(Array.from({ length: 40 }, worker))
  return names
}

/** N DELETEs at job-sweeper's concurrency and request rate, over one connection pool. */
async function rawDeletes(kc: KubeConfig, namespace: string, names: string[]): Promise<number> {
  const rest = new Rest(kc)
  const rate = new PQueue({ intervalCap: DEFAULT_CLIENT_OPTIONS.requestsPerSecond, interval: 1000 })
  const started = performance.now()
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < names.length) {
      const name = names[next++]
      await rate.add(() => rest.request('DELETE', `/apis/batch/v1/namespaces/${namespace}/jobs/${name}`, { body: { propagationPolicy: 'Background' } }))
    }
  }
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  } finally {
    await rest.close()
  }
  return performance.now() - started
}

export async function benchSweepDelete(cluster: Cluster, n: number, log: (line: string) => void): Promise<SweepDeleteFigures> {
  const kc = new KubeConfig()
  kc.loadFromFile(cluster.kubeconfig)
  const core = kc.makeApiClient(CoreV1Api)
  const batch = kc.makeApiClient(BatchV1Api)
  const stamp = Date.now()
  const [nsSweeper, nsRaw] = ['sweeper', 'raw'].map((who) => `bench-sweep-delete-${who}-${stamp}`)
  try {
    for (const namespace of [nsSweeper, nsRaw]) await core.createNamespace({ body: { metadata: { name: namespace } } })
    const setupStarted = performance.now()
    const [, rawNames] = await Promise.all([finishedWithoutPods(kc, nsSweeper, n, log), finishedWithoutPods(kc, nsRaw, n, log)])
    const setupMs = performance.now() - setupStarted
    // Beside the targets: a running Job of the same label, one of another label, and a finished one kept forever.
    const decoys: TestJob[] = [
      { namespace: nsSweeper, name: 'decoy-running', behaviour: 'hold', labels: { [LABEL]: 'delete' } },
      { namespace: nsSweeper, name: 'decoy-other-label', labels: { [LABEL]: 'other' }, annotations: { 'job-sweeper.io/ttl': '1s' } },
      { namespace: nsSweeper, name: 'decoy-never', labels: { [LABEL]: 'delete' }, annotations: { 'job-sweeper.io/ttl': 'never' } }
    ]
    const kept = await createDecoyJobs(batch, decoys)
    log(`${2 * n} finished Jobs set up in ${(setupMs / 1000).toFixed(1)}s; job-sweeper sweep …`)

    const env = { KUBECONFIG: cluster.kubeconfig }
    await settle(log)
    const run = mustSucceed(
      'job-sweeper sweep',
      await measure([...CLI, 'sweep', '--namespace', nsSweeper, '--selector', `${LABEL}=delete`, '--harvest-logs', 'none', '--json'], env)
    )
    const json = JSON.parse(run.stdout) as { 'api-requests': number; 'pruned-count': number }
    if (json['pruned-count'] !== n) throw new Error(`job-sweeper sweep pruned ${json['pruned-count']} Jobs, expected ${n}`)
    await settle(log)
    log('raw DELETEs …')
    const rawMs = await rawDeletes(kc, nsRaw, rawNames)

    // Every target gone, every decoy still there with its UID: the figures count only if the work was right.
    await checkLeft(batch, nsSweeper, kept, 'the sweep')
    await checkLeft(batch, nsRaw, [], 'the raw DELETEs')
    return {
      jobs: n,
      setupMs,
      sweeper: { ...run, requests: json['api-requests'], jsonBytes: Buffer.byteLength(run.stdout) },
      raw: { wallMs: rawMs, requests: n, concurrency: CONCURRENCY, requestsPerSecond: DEFAULT_CLIENT_OPTIONS.requestsPerSecond },
      decoys: decoys.length
    }
  } finally {
    for (const namespace of [nsSweeper, nsRaw]) await core.deleteNamespace({ name: namespace }).catch(() => undefined)
  }
}
