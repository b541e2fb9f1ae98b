// The manifest input's content (helm template output, or any multi-document YAML): the Jobs it
// renders, read with the settings so that a bad file is refused before the cluster is read.
import type { V1Job } from '@kubernetes/client-node'
import { loadAll } from 'js-yaml'

/** The batch/v1 Jobs in a multi-document YAML text. */
export function renderedJobs(text: string): V1Job[] {
  // Plain objects, as the API server's answers are here (client-node's loadAllYaml would copy each
  // into its model classes, dropping any field they do not know).
  return loadAll(text).filter((doc): doc is V1Job => {
    const d = doc as { apiVersion?: string; kind?: string; metadata?: { name?: string } } | null
    return d?.kind === 'Job' && d.apiVersion === 'batch/v1' && typeof d.metadata?.name === 'string'
  })
}
