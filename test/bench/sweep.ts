// Sweep benchmark: listing and planning only. Jobs suspended from the start never run, so the
// sweep's dry run reads and plans 10,000 Jobs in 50 namespaces and keeps them all; beside it,
// `kubectl get jobs -A -o json`, which a script would parse to decide the same.
import { BatchV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node'
import type { Cluster } from '../cluster/cluster.ts'
import { jobManifest } from '../cluster/testenv.ts'
import { CLI, measure, mustSucceed, type Measured } from './measure.ts'

/** What the sweep benchmark measured. */
export interface SweepFigures {
  jobs: number
  namespaces: number
  setupMs: number
  sweeper: Measured & { jsonBytes: number }
  text: Measured
  kubectl: Measured & { jsonBytes: number }
}

const LABEL = 'job-sweeper.io/bench'

export async function benchSweep(cluster: Cluster, jobs: number, namespaces: number, log: (line: string) => void): Promise<SweepFigures> {
  const kc = new KubeConfig()
  kc.loadFromFile(cluster.kubeconfig)
  const core = kc.makeApiClient(CoreV1Api)
  const batch = kc.makeApiClient(BatchV1Api)
  const stamp = Date.now()
  const names = Array.from({ length: namespaces }, (_, i) => `bench-sweep-${stamp}-${i}`)
  try {
    const started = performance.now()
    for (const name of names) await core.createNamespace({ body: { metadata: { name } } })
    const perNamespace = Math.ceil(jobs / namespaces)
    const work = names.flatMap((namespace) => Array.from({ length: perNamespace }, (_, i) => ({ namespace, name: `job-${i}` }))).slice(0, jobs)
    let next = 0
    const worker = async (): Promise<void> => {
      while (next < work.length) {
        const { namespace, name } = work[next++]
        const body = jobManifest({ namespace, name, labels: { [LABEL]: 'sweep' }, annotations: { 'job-sweeper.io/ttl': '1s' }, spec: { suspend: true } })
        await batch.createNamespacedJob({ namespace, body })
        if (next % 2000 === 0) log(`${next}/${work.length} suspended Jobs created`)
      }
    }
    await Promise.all(Array.from({ length: 40 }, worker))
    const setupMs = performance.now() - started
    log(`${jobs} suspended Jobs in ${namespaces} namespaces created in ${(setupMs / 1000).toFixed(1)}s`)

    const env = { KUBECONFIG: cluster.kubeconfig }
    const sweepArgs = [...CLI, 'sweep', '--all-namespaces', '--selector', `${LABEL}=sweep`, '--dry-run']
    const sweeperRun = mustSucceed('job-sweeper sweep --json', await measure([...sweepArgs, '--json'], env))
    const text = mustSucceed('job-sweeper sweep', await measure(sweepArgs, env))
    const kept = (JSON.parse(sweeperRun.stdout) as { 'kept-count'?: number })['kept-count']
    if (kept !== jobs) throw new Error(`the sweep's dry run kept ${kept} Jobs, expected all ${jobs} (suspended, so never finished)`)
    const kubectlRun = mustSucceed(
      'kubectl get jobs -A -o json',
      await measure([`${cluster.binDir}/kubectl`, 'get', 'jobs', '-A', '-l', `${LABEL}=sweep`, '-o', 'json'], env)
    )
    return {
      jobs,
      namespaces,
      setupMs,
      sweeper: { ...sweeperRun, jsonBytes: Buffer.byteLength(sweeperRun.stdout) },
      text,
      kubectl: { ...kubectlRun, jsonBytes: Buffer.byteLength(kubectlRun.stdout) }
    }
  } finally {
    for (const name of names) await core.deleteNamespace({ name }).catch(() => undefined)
  }
}
