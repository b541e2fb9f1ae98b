// What observe() hands the planner: the Jobs it saw, where, and (with a manifest) how each rendered
// Job differs from its live namesake. Types and their words only, so that plan/ depends on observe/
// and never the other way.
import type { KeeperPresence } from './keeper-lease.ts'
import type { JobRecord } from '../kube/job-record.ts'

/** Every namespace: where a sweep with all-namespaces works. Never a namespace's name; see whereWords. */
export const ALL_NAMESPACES: unique symbol = Symbol('all namespaces')

/** Where a phase works: its namespace (pre, post), a sweep's namespaces (`a, b`), or ALL_NAMESPACES. */
export type Where = string | typeof ALL_NAMESPACES

/** Where, in words: the namespace or namespaces, or `all namespaces`. */
export function whereWords(where: Where): string {
  return where === ALL_NAMESPACES ? 'all namespaces' : where
}

/** How a live Job differs from its rendered manifest, as the API server's dry run found. */
export interface ManifestDifference {
  /**
   * differs: the API server refuses the change (the pod template is immutable); conflict: the
   * upgrade's server-side apply would meet another field manager; unknown: the dry run itself was
   * refused (403, a webhook that cannot dry-run…), so the Job is treated as changed.
   */
  kind: 'differs' | 'conflict' | 'unknown'
  /** For the summary: the pod template's changes, the conflicting fields, or why it could not compare. */
  detail: string
}

/** What observe() saw: the candidate Jobs, and for manifest scope, the rendered Jobs' verdicts. */
export interface Observed {
  /** The namespace worked in (sweep: the namespaces, or all, for the summary). */
  namespace: Where
  /** Jobs in the namespace(s) (already narrowed by the label selector, if any). */
  jobs: JobRecord[]
  /** With `manifest`: Job name → undefined if the upgrade can keep the live Job as it is, else how it differs. */
  manifest?: Map<string, ManifestDifference | undefined>
  /** Per namespace, the resourceVersion of the list: waits watch from there, missing nothing. */
  resourceVersions?: Record<string, string>
  /** How many Jobs were listed, when they went to a planner page by page instead of into `jobs`. */
  listed?: number
  /** With keeper-namespace (pre, sweep): the keeper's Lease, to tell the holds no keeper runs to let go of. */
  keeper?: KeeperPresence
}
