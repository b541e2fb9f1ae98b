// One verdict per object of the rendered release: what the upgrade's write of it would meet, as the
// API server's dry run answered. Pure: the classes, which of them fail an upgrade, and the reason a
// person reads in the summary.

/** What the upgrade's write of one object would meet. */
export type Verdict =
  /** The write changes nothing. */
  | { kind: 'unchanged' }
  /**
   * The object is new to the cluster: the upgrade creates it, and the dry run of that (a create, or Helm 4's apply) passed.
   * `after`: it could not be dry-run yet, since what it needs comes first (its CRD, from the chart's crds/).
   */
  | { kind: 'new'; after?: string }
  /** The write changes these paths (`spec.replicas: 1 → 3`), and the API server accepts it. */
  | { kind: 'changes'; paths: string[] }
  /**
   * The write changes fields the API server refuses to change: each path, before → after where
   * known. `template`: what the rendering also changes in a StatefulSet's pod template, which a
   * recreated StatefulSet rolls out to its adopted pods.
   */
  | { kind: 'immutable'; fields: string[]; message: string; template?: string[] }
  /** Server-side apply: other field managers own fields the release sets to other values. */
  | { kind: 'conflict'; fields: string[]; managers: string[] }
  /** An admission webhook, a ValidatingAdmissionPolicy or another admission check refuses the write. */
  | { kind: 'denied'; by: string; message: string }
  /** The API server's validation (or the kind's schema) refuses the rendered object itself. */
  | { kind: 'invalid'; fields: string[]; message: string }
  /** The object exists, and is not this release's: Helm will not adopt it without --take-ownership (checkOwnership's words). */
  | { kind: 'not-owned'; message: string }
  /** A hook of the upgrade meets the namesake an earlier run left (its delete policy kept it). */
  | { kind: 'exists'; message: string }
  /** The cluster does not serve the kind in this apiVersion (a missing CRD, a removed API version). */
  | { kind: 'not-served'; what: string }
  /** The check could not tell (our credentials may not, a webhook that cannot dry-run): a warning. */
  | { kind: 'not-checked'; why: string }

export type VerdictKind = Verdict['kind']

/** The verdicts that make an upgrade fail. */
export const FAILING: ReadonlySet<VerdictKind> = new Set(['immutable', 'conflict', 'denied', 'invalid', 'not-served', 'not-owned', 'exists'])

/**
 * Pre clears a rendered Job the upgrade cannot write (deletes it; the upgrade then creates it anew).
 * Not a left-over hook (`exists`): pre compares it with its rendering and keeps it when they are the same.
 */
const CLEARED_BY_PRE: ReadonlySet<VerdictKind> = new Set(['immutable', 'conflict'])

/** The write Helm makes for one object: create, server-side apply, or a (strategic or JSON merge) patch. */
export type Write = 'create' | 'apply' | 'patch' | 'none'

/** One object of the rendered release and its verdict. */
export interface ObjectVerdict {
  apiVersion: string
  kind: string
  /** Undefined for a cluster-scoped object. */
  namespace?: string
  name: string
  /** Which dry-run write was sent. */
  write: Write
  verdict: Verdict
  /** A Job pre clears before the upgrade, or a StatefulSet it recreates (recreate-statefulsets): its failing verdict does not fail the preflight. */
  clearedByPre: boolean
  /** A Job the upgrade cannot write that pre would clear but for its settings: why pre leaves it. */
  preLeaves?: string
  /** A hook of the upgrade (its events): Helm creates it anew at its hook. */
  hook?: string[]
}

/** Whether pre's deletion would clear this object's failure: a batch/v1 Job the upgrade cannot write (is it in pre's scope: pre-scope.ts). */
export function clearableByPre(apiVersion: string, kind: string, verdict: Verdict): boolean {
  return apiVersion === 'batch/v1' && kind === 'Job' && CLEARED_BY_PRE.has(verdict.kind)
}

/** The StatefulSet fields whose change recreate-statefulsets remedies: the new StatefulSet still selects and adopts the same pods. */
const RECREATABLE = ['spec.volumeClaimTemplates', 'spec.serviceName', 'spec.podManagementPolicy']

/**
 * recreate-statefulsets: a StatefulSet whose refused change is in RECREATABLE only is deleted by
 * pre with propagationPolicy Orphan, and the upgrade creates it anew; its pods and PVCs stay and
 * the new one adopts them. Not a selector change: the new StatefulSet would not select the running
 * pods, and would meet them by name. Not any other class (a conflict, a denial): the new one would
 * meet it as well. An immutable verdict that names no field is not remedied either.
 */
export function recreatedByPre(v: ObjectVerdict): boolean {
  if (v.apiVersion !== 'apps/v1' || v.kind !== 'StatefulSet' || v.verdict.kind !== 'immutable') return false
  const { fields } = v.verdict
  return fields.length > 0 && fields.every((f) => RECREATABLE.some((r) => f === r || f.startsWith(`${r}.`) || f.startsWith(`${r}[`) || f.startsWith(`${r}:`)))
}

/**
 * What recreate-statefulsets does to the pods, in words: they stay, and where the rendering also
 * changes the pod template, the new StatefulSet then replaces them one by one, as for any template
 * change.
 */
export function recreatedPods(v: ObjectVerdict): string {
  const template = v.verdict.kind === 'immutable' ? (v.verdict.template ?? []) : []
  const rolled = template.length > 0 ? `, then replaces them one by one: the pod template changes too (${list(template, 2)})` : ''
  return `its pods and PVCs stay; the upgrade creates it anew and it adopts them${rolled}`
}

/** The verdicts with pre's chosen remedies marked as cleared: today recreate-statefulsets only. */
export function withRemedies(verdicts: ObjectVerdict[], recreateStatefulSets: boolean): ObjectVerdict[] {
  if (!recreateStatefulSets) return verdicts
  return verdicts.map((v) => (recreatedByPre(v) ? { ...v, clearedByPre: true } : v))
}

/** The verdict fails the upgrade, and pre does not clear it. */
export const failsUpgrade = (v: ObjectVerdict): boolean => FAILING.has(v.verdict.kind) && !v.clearedByPre

/** The longest reason shown for one object. */
export const MAX_REASON = 400

function cut(text: string, max = MAX_REASON): string {
  const one = text.replace(/\s+/g, ' ').trim()
  return one.length > max ? `${one.slice(0, max - 1)}…` : one
}

/** `a; b; c and 4 more`. */
function list(items: string[], max = 4): string {
  const shown = items.slice(0, max).join('; ')
  return items.length > max ? `${shown} and ${items.length - max} more` : shown
}

/** The verdict in words, at most MAX_REASON characters. */
export function reasonOf(v: Verdict): string {
  switch (v.kind) {
    case 'unchanged':
      return 'unchanged'
    case 'new':
      return v.after ? `new: the upgrade creates it after ${v.after}` : 'new: the upgrade creates it (its dry run passed)'
    case 'changes':
      return cut(`changes: ${list(v.paths)}`)
    case 'immutable':
      return cut(`immutable: ${v.fields.length > 0 ? list(v.fields) : v.message}`)
    case 'conflict':
      return cut(`conflict: ${list(v.fields)} owned by ${v.managers.map((m) => `"${m}"`).join(', ')} (helm upgrade without --force-conflicts fails)`)
    case 'denied':
      return cut(`denied by ${v.by}: ${v.message}`)
    case 'invalid':
      return cut(`invalid: ${v.message}`)
    case 'not-served':
      return cut(`not served: the cluster does not serve ${v.what}`)
    case 'not-owned':
      return cut(`not the release's: helm upgrade will not adopt it without --take-ownership (${v.message})`)
    case 'exists':
      return cut(v.message)
    case 'not-checked':
      return cut(`not checked: ${v.why}`)
  }
}
