// Wait latency: how soon `on-running: wait` notices that a Job finished, against `kubectl wait`
// (the baseline) on the same Job at the same moment. Medians and their ratio; no pass/fail
// threshold (timings are not asserted in tests).
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { BatchV1Api, CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node'
import { KubeJobsClient } from '../../src/kube/client.ts'
import { isFinished } from '../../src/plan/predicates.ts'
import { JobInformer } from '../../src/kube/informer.ts'
import { toJobRecord } from '../../src/kube/job-record.ts'
import type { Cluster } from '../cluster/cluster.ts'
import { HOLD_LABEL } from '../cluster/kwok.ts'

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** Milliseconds from the release of a held pod until each waiter returned, per round. */
export interface WaitFigures {
  sweeper: number[]
  kubectl: number[]
}

export async function benchWaitLatency(cluster: Cluster, rounds: number, log: (line: string) => void): Promise<WaitFigures> {
  const kc = new KubeConfig()
  kc.loadFromFile(cluster.kubeconfig)

  const batch = kc.makeApiClient(BatchV1Api)
  const core = kc.makeApiClient(CoreV1Api)
  const client = new KubeJobsClient(kc)
  const ns = `bench-${Date.now()}`
  await core.createNamespace({ body: { metadata: { name: ns } } })

  const ours: number[] = []
  const kubectl: number[] = []
  try {
    for (let round = 0; round < rounds; round++) {
      const name = `held-${round}`
      const job = await batch.createNamespacedJob({
        namespace: ns,
        body: {
          metadata: { name },
          spec: {
            backoffLimit: 0,
            template: { metadata: { labels: { [HOLD_LABEL]: 'true' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } }
          }
        }
      })
      while ((await batch.readNamespacedJob({ name, namespace: ns })).status?.active !== 1) await sleep(100)

      let t0 = 0
      // The product's wait: the shared watch, from the resourceVersion of the Job it last read.
      const seen = toJobRecord(await batch.readNamespacedJob({ name, namespace: ns }))
      const informer = new JobInformer(client, ns, seen.metadata?.resourceVersion ?? '')
      const watched = informer
        .waitFor(seen, (j) => j === undefined || isFinished(j), 60_000)
        .then(() => performance.now() - t0)
        .finally(() => informer.stop())
      const baseline = new Promise<number>((resolve, reject) => {
        const child = spawn(join(cluster.binDir, 'kubectl'), ['wait', '-n', ns, `job/${name}`, '--for=condition=complete', '--timeout=60s'], {
          env: { ...process.env, KUBECONFIG: cluster.kubeconfig },
          stdio: 'ignore'
        })
        child.on('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`kubectl wait exited ${code}`))))
      })
      await sleep(1500) // both are watching
      const [pod] = (await core.listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/controller-uid=${job.metadata?.uid}` })).items
      t0 = performance.now()
      await core.patchNamespacedPod(
        { name: pod.metadata?.name ?? '', namespace: ns, body: { metadata: { labels: { [HOLD_LABEL]: null } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch)
      )
      const [a, b] = await Promise.all([watched, baseline])
      ours.push(a)
      kubectl.push(b)
      log(`round ${round + 1}/${rounds}: job-sweeper ${a.toFixed(0)} ms, kubectl wait ${b.toFixed(0)} ms after the hold was released`)
    }
  } finally {
    await core.deleteNamespace({ name: ns }).catch(() => undefined)
  }
  return { sweeper: ours, kubectl }
}
