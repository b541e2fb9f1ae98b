// Sweep benchmark: listing and planning only, at growing sizes. Jobs suspended from the start never
// run, so the sweep's dry run reads and plans every Job in 50 namespaces and keeps them all. Beside
// it at each size: the floor (every Job listed in pages of 500 and parsed, nothing kept:
// raw-list.ts) and `kubectl get jobs -A -o json`, which a script would parse to decide the same.
// Time and bytes per Job at each size show a step that grows faster than the work.
import { join } from 'node:path'
import { BatchV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node'
import type { Cluster } from '../cluster/cluster.ts'
import { jobManifest } from '../cluster/testenv.ts'
import { CLI, measure, mustSucceed, settle, type Measured } from './measure.ts'

/** One size's figures. */
export interface SweepSize {
  jobs: number
  sweeper: Measured & { jsonBytes: number }
  text: Measured
  raw: Measured
  /** Only up to kubectlUpTo Jobs (it needs gigabytes beyond). */
  kubectl?: Measured & { jsonBytes: number }
}

/** What the sweep benchmark measured. */
export interface SweepFigures {
  namespaces: number
  /** Peak RSS of the same sweep over no Job: bytes per Job are counted above it. */
  idle: Measured
  sizes: SweepSize[]
  setupMs: number
}

const LABEL = 'job-sweeper.io/bench'
const RAW_LIST = [process.execPath, '--disable-warning=ExperimentalWarning', join(import.meta.dirname, 'raw-list.ts')]

export async function benchSweep(
  cluster: Cluster,
  sizes: number[],
  namespaces: number,
  kubectlUpTo: number,
  log: (line: string) => void
): Promise<SweepFigures> {
  const kc = new KubeConfig()
  kc.loadFromFile(cluster.kubeconfig)
  const core = kc.makeApiClient(CoreV1Api)
  const batch = kc.makeApiClient(BatchV1Api)
  const stamp = Date.now()
  const names = Array.from({ length: namespaces }, (_, i) => `bench-sweep-${stamp}-${i}`)
  const env = { KUBECONFIG: cluster.kubeconfig }
  const sweepArgs = (selector: string): string[] => [...CLI, 'sweep', '--all-namespaces', '--selector', selector, '--dry-run']
  try {
    for (const name of names) await core.createNamespace({ body: { metadata: { name } } })
    const idle = mustSucceed('job-sweeper sweep over no Job', await measure([...sweepArgs(`${LABEL}=none`), '--json'], env))
    let created = 0
    let setupMs = 0
    const figures: SweepSize[] = []
    for (const size of [...sizes].sort((a, b) => a - b)) {
      // Job i goes to namespace i % namespaces: each size adds to every namespace.
      const started = performance.now()
      let next = created
      const worker = async (): Promise<void> => {
        while (next < size) {
          const i = next++
          const body = jobManifest({
            namespace: names[i % namespaces],
            name: `job-${i}`,
            labels: { [LABEL]: 'sweep' },
            annotations: { 'job-sweeper.io/ttl': '1s' },
            spec: { suspend: true }
          })
          await batch.createNamespacedJob({ namespace: body.metadata?.namespace ?? '', body })
          if (i > 0 && i % 5000 === 0) log(`${i}/${size} suspended Jobs created`)
        }
      }
      await Promise.all(Array.from({ length: 40 }, worker))
      created = size
      setupMs += performance.now() - started
      log(`${size} suspended Jobs in ${namespaces} namespaces; measuring …`)
      await settle(log)

      const sweeperRun = mustSucceed('job-sweeper sweep --json', await measure([...sweepArgs(`${LABEL}=sweep`), '--json'], env))
      const kept = (JSON.parse(sweeperRun.stdout) as { 'kept-count'?: number })['kept-count']
      if (kept !== size) throw new Error(`the sweep's dry run kept ${kept} Jobs, expected all ${size} (suspended, so never finished)`)
      const text = mustSucceed('job-sweeper sweep', await measure(sweepArgs(`${LABEL}=sweep`), env))
      const raw = mustSucceed('raw paged list', await measure([...RAW_LIST, `${LABEL}=sweep`], env))
      if (Number(raw.stdout.trim()) !== size) throw new Error(`the raw list found ${raw.stdout.trim()} Jobs, expected ${size}`)
      const kubectlRun =
        size <= kubectlUpTo
          ? mustSucceed(
              'kubectl get jobs -A -o json',
              await measure([`${cluster.binDir}/kubectl`, 'get', 'jobs', '-A', '-l', `${LABEL}=sweep`, '-o', 'json'], env)
            )
          : undefined
      figures.push({
        jobs: size,
        sweeper: { ...sweeperRun, jsonBytes: Buffer.byteLength(sweeperRun.stdout) },
        text,
        raw,
        kubectl: kubectlRun && { ...kubectlRun, jsonBytes: Buffer.byteLength(kubectlRun.stdout) }
      })
    }
    return { namespaces, idle, sizes: figures, setupMs }
  } finally {
    for (const name of names) await core.deleteNamespace({ name }).catch(() => undefined)
  }
}
