// The manifest input's content (helm template output, Helm's --dry-run output, or any multi-document
// YAML): the Jobs it renders, read with the settings so that a bad file is refused before the
// cluster is read. Hook Jobs are among them, as in helm template's output (the planner decides what
// a hook's scope is), so a dry run's HOOKS: section counts as its MANIFEST: does.
import type { V1Job } from '@kubernetes/client-node'
import { renderedDocuments } from './helm-output.ts'

/** The batch/v1 Jobs in a manifest text, read as Helm reads it (helm-yaml.ts). */
export function renderedJobs(text: string): V1Job[] {
  // Plain objects, as the API server's answers are here (client-node's loadAllYaml would copy each
  // into its model classes, dropping any field they do not know).
  return renderedDocuments(text)
    .documents.map((d) => d.value)
    .filter((doc): doc is V1Job => {
      const d = doc as { apiVersion?: string; kind?: string; metadata?: { name?: string } }
      return d.kind === 'Job' && d.apiVersion === 'batch/v1' && typeof d.metadata?.name === 'string'
    })
}
