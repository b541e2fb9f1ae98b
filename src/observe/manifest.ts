// Rendered manifests (helm template output, or any multi-document YAML): the Jobs they name, and
// whether a live Job's pod template differs from the rendered one.
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

// Labels the API server generates into a Job's pod template at creation (with its selector).
const GENERATED_TEMPLATE_LABELS = ['batch.kubernetes.io/controller-uid', 'batch.kubernetes.io/job-name', 'controller-uid', 'job-name']

/**
 * The rendered Job as a full replacement of the live one, for a server-side dry run: the API
 * server then applies its own defaults to the rendered template and runs its own immutability
 * check, so "identical" means exactly what the upgrade will meet. Only what the API server
 * generated at creation (selector, controller labels) is carried over.
 */
export function replacementFor(rendered: V1Job, live: V1Job): V1Job {
  const liveLabels = live.spec?.template?.metadata?.labels ?? {}
  const generated = Object.fromEntries(GENERATED_TEMPLATE_LABELS.filter((k) => liveLabels[k] !== undefined).map((k) => [k, liveLabels[k]]))
  const template = rendered.spec?.template ?? { spec: { containers: [] } }
  return {
    ...rendered,
    metadata: {
      ...live.metadata,
      labels: rendered.metadata?.labels,
      annotations: { ...live.metadata?.annotations, ...rendered.metadata?.annotations },
      managedFields: undefined,
      // Jobs allow an update without one: the dry run must not fail because the Job changed since it was read.
      resourceVersion: undefined
    },
    spec: {
      ...rendered.spec,
      template: { ...template, metadata: { ...template.metadata, labels: { ...template.metadata?.labels, ...generated } } },
      selector: rendered.spec?.selector ?? live.spec?.selector
    }
  } as V1Job
}
