// The objects of a rendered release (helm template output, or any multi-document YAML) that the
// upgrade writes: every document with an apiVersion, a kind and a name, except Helm's hooks, which
// Helm creates at their hook (deleting the old one first, by their delete policy), never patches.
import { loadAll } from 'js-yaml'
import type { KubeObject } from '../kube/manifest-client.ts'

/** Objects the upgrade writes, and the hooks left out of the check. */
export interface RenderedRelease {
  objects: KubeObject[]
  /** `Kind/name` of each hook left out. */
  hooks: string[]
}

const isObject = (doc: unknown): doc is KubeObject =>
  typeof doc === 'object' &&
  doc !== null &&
  typeof (doc as KubeObject).apiVersion === 'string' &&
  typeof (doc as KubeObject).kind === 'string' &&
  typeof (doc as KubeObject).metadata?.name === 'string'

/** The release's objects in a multi-document YAML text; throws on YAML that does not parse. */
export function renderedRelease(text: string): RenderedRelease {
  const objects: KubeObject[] = []
  const hooks: string[] = []
  for (const doc of loadAll(text)) {
    // A `kind: List` (kubectl's output) holds its objects in items.
    const list = doc as { kind?: unknown; items?: unknown } | null
    const docs = list?.kind === 'List' && Array.isArray(list.items) ? (list.items as unknown[]) : [doc]
    for (const d of docs) {
      if (!isObject(d)) continue
      if (d.metadata?.annotations?.['helm.sh/hook'] !== undefined) hooks.push(`${d.kind}/${d.metadata?.name}`)
      else objects.push(d)
    }
  }
  return { objects, hooks }
}
