// Decoys of a benchmark: Jobs beside the targets that no run may touch. A benchmark's figures
// count only if the work was right, so each ends by checking what is left in its namespaces.
import type { BatchV1Api } from '@kubernetes/client-node'
import { jobManifest, type TestJob } from '../cluster/testenv.ts'

/** Creates each decoy in its namespace; returns them as `name/uid`, what checkLeft() compares. */
export async function createDecoyJobs(batch: BatchV1Api, decoys: TestJob[]): Promise<string[]> {
  const created: string[] = []
  for (const job of decoys) created.push(`${job.name}/${(await batch.createNamespacedJob({ namespace: job.namespace, body: jobManifest(job) })).metadata?.uid}`)
  return created
}

/** Throws unless `namespace` holds exactly the Jobs `expected` (`name/uid`): every target gone, every decoy there with its UID. */
export async function checkLeft(batch: BatchV1Api, namespace: string, expected: string[], after: string): Promise<void> {
  const left = (await batch.listNamespacedJob({ namespace })).items.map((j) => `${j.metadata?.name}/${j.metadata?.uid}`).sort()
  if (JSON.stringify(left) !== JSON.stringify([...expected].sort()))
    throw new Error(`after ${after}, ${namespace} holds ${left.length} Jobs: ${left.slice(0, 5).join(', ')}`)
}
