// The objects of a rendered release (helm template output, Helm's --dry-run output, or any
// multi-document YAML), read as Helm reads them (helm-yaml.ts), sorted as the upgrade treats them:
// the objects it writes; Helm's hooks, which it creates at their hook (deleting the old one first,
// by their delete policy), never patches; and the files of a chart's crds/ directory, which Helm
// creates on install when missing and never upgrades (helm template prints them with --include-crds).
import type { KubeObject } from './kube-object.ts'
import { renderedDocuments, type Renderer } from './helm-output.ts'

/** A rendered release's documents, by how the upgrade treats them. */
export interface RenderedRelease {
  /** Objects the upgrade writes. */
  objects: KubeObject[]
  /** Helm's hooks (annotation helm.sh/hook), left out of the check. */
  hooks: KubeObject[]
  /** Documents of a chart's crds/ directory (`# Source: <chart>/crds/…`); a CRD under templates/ is one of the objects. */
  crds: KubeObject[]
  /** What printed the text. */
  renderer: Renderer
}

const isObject = (doc: unknown): doc is KubeObject =>
  typeof doc === 'object' &&
  doc !== null &&
  typeof (doc as KubeObject).apiVersion === 'string' &&
  typeof (doc as KubeObject).kind === 'string' &&
  typeof (doc as KubeObject).metadata?.name === 'string'

// Helm names a crds/ file by the chart's path (ChartFullPath: `parent/charts/sub`) and the file's.
const CRDS_SOURCE = /^[^/\\]+(?:[/\\]charts[/\\][^/\\]+)*[/\\]crds[/\\]/

/** The release's objects in a manifest text; throws on YAML that Helm would not read. */
export function renderedRelease(text: string): RenderedRelease {
  const { renderer, documents } = renderedDocuments(text)
  const release: RenderedRelease = { objects: [], hooks: [], crds: [], renderer }
  for (const { value, source } of documents) {
    // A `kind: List` (kubectl's output) holds its objects in items.
    const list = value as { kind?: unknown; items?: unknown }
    const docs = list.kind === 'List' && Array.isArray(list.items) ? (list.items as unknown[]) : [value]
    for (const d of docs) {
      if (!isObject(d)) continue
      if (source !== undefined && CRDS_SOURCE.test(source)) release.crds.push(d)
      else if (d.metadata?.annotations?.['helm.sh/hook'] !== undefined) release.hooks.push(d)
      else release.objects.push(d)
    }
  }
  return release
}
