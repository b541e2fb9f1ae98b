// Does preflight's verdict agree with what helm upgrade then did? Two readings and one comparison:
// what preflight's --json says (readPreflight: the one place that knows its shape), what Helm's
// error names (helmNames: the objects and release-level reasons of Helm 3's and Helm 4's
// messages), and agreement(): the same outcome, and every object or reason Helm names among the
// failures preflight names.
import type { CommandResult } from '../cluster/testenv.ts'

/** An object as preflight or Helm names it; Helm names some only by kind or only by name. */
export interface ObjectRef {
  kind?: string
  name?: string
  namespace?: string
}

/** What preflight said about the upgrade. */
export interface PreflightSays {
  wouldApply: boolean
  /** Objects whose verdict fails the upgrade (`objects[]` with `failsUpgrade: true`). */
  failing: ObjectRef[]
  /** Jobs (or StatefulSets) preflight expects pre to clear (`clearedByPre: true`). */
  cleared: ObjectRef[]
  /** Release-level reasons: the strings of any top-level field whose name contains "block". */
  blocks: string[]
}

const strings = (v: unknown): string[] =>
  typeof v === 'string' ? [v] : Array.isArray(v) ? v.flatMap(strings) : v && typeof v === 'object' ? [JSON.stringify(v)] : []

/**
 * Reads preflight's --json. Kept small and alone so that a change of shape (a new release-level
 * field, say `blocked: ["another operation is in progress"]`) is adjusted here only.
 */
export function readPreflight(json: unknown): PreflightSays {
  const doc = json as { wouldApply?: unknown; objects?: { kind?: string; name?: string; namespace?: string; failsUpgrade?: boolean; clearedByPre?: boolean }[] }
  if (typeof doc?.wouldApply !== 'boolean') throw new Error('no boolean wouldApply in the JSON')
  const objects = doc.objects ?? []
  const ref = (o: (typeof objects)[number]): ObjectRef => ({ kind: o.kind, name: o.name, namespace: o.namespace })
  const blocks = Object.entries(doc as Record<string, unknown>)
    .filter(([key]) => /block/i.test(key))
    .flatMap(([, value]) => strings(value))
  return {
    wouldApply: doc.wouldApply,
    failing: objects.filter((o) => o.failsUpgrade === true).map(ref),
    cleared: objects.filter((o) => o.clearedByPre === true).map(ref),
    blocks
  }
}

/** A reason Helm gives for the whole release, and the words a preflight block naming it would use. */
interface ReleaseReason {
  helm: RegExp
  block: RegExp
}
const RELEASE_REASONS: ReleaseReason[] = [
  { helm: /another operation \(install\/upgrade\/rollback\) is in progress/, block: /in progress|pending/i },
  { helm: /current release manifest contains removed kubernetes api\(s\)/, block: /removed|not served|no longer serve|previous|current release|revision/i },
  { helm: /unable to build kubernetes objects from current release manifest/, block: /removed|not served|no longer serve|previous|current release|revision/i },
  { helm: /has no deployed releases/, block: /deployed/i }
]

/** What Helm's error names: objects (kind and/or name) and release-level reasons. */
export interface HelmNames {
  objects: ObjectRef[]
  reasons: string[]
}

// Each names one object, in Helm 3's words (client-side patch, create, validation) or Helm 4's
// (server-side apply); kind = a Kind (`Deployment`) or a resource (`configmaps`, `jobs.batch`).
const OBJECT_PATTERNS: { re: RegExp; kind?: number; name?: number; namespace?: number }[] = [
  // Helm 3: cannot patch "app-web" with kind Deployment: …
  { re: /cannot patch "([^"]+)" with kind (\w+)/g, name: 1, kind: 2 },
  // Helm 4: server-side apply failed for object ns/app-web apps/v1, Kind=Deployment: …; conflict occurred while applying object …
  { re: /object (?:([\w.-]*)\/)?([\w.-]+) [\w./-]*, Kind=(\w+)/g, namespace: 1, name: 2, kind: 3 },
  // The API server's own: Deployment.apps "app-web" is invalid; configmaps "x" is forbidden; jobs.batch "x" already exists
  { re: /\b([\w]+)(?:\.[\w.]+)? "([^"]+)" (?:is invalid|is forbidden|already exists)/g, kind: 1, name: 2 },
  // Ownership: ConfigMap "x" in namespace "ns" exists and cannot be imported into the current release
  { re: /(\w+) "([^"]+)" in namespace "([^"]*)" exists and cannot be imported/g, kind: 1, name: 2, namespace: 3 },
  // Kinds the cluster does not serve: resource mapping not found for name: "x" namespace: "" from "": no matches for kind "Widget"
  { re: /resource mapping not found for name: "([^"]+)" namespace: "([^"]*)" from "[^"]*": no matches for kind "(\w+)"/g, name: 1, namespace: 2, kind: 3 },
  // Helm 3's client-side validation names a kind only: ValidationError(Deployment.spec…): unknown field
  { re: /ValidationError\((\w+)[.)]/g, kind: 1 },
  // Strict decoding: Deployment in version "v1" cannot be handled as a Deployment: strict decoding error
  { re: /(\w+) in version "[^"]+" cannot be handled as a (\w+)/g, kind: 1 }
]

export function helmNames(stderr: string): HelmNames {
  const reasons = RELEASE_REASONS.filter((r) => r.helm.test(stderr)).map((r) => r.helm.source)
  const objects: ObjectRef[] = []
  // A kind missing from the current release manifest is the release's reason, not an object of the new rendering.
  const text = /from current release manifest/.test(stderr) ? '' : stderr
  for (const p of OBJECT_PATTERNS) {
    for (const m of text.matchAll(p.re)) {
      objects.push({
        kind: p.kind ? m[p.kind] : undefined,
        name: p.name ? m[p.name] : undefined,
        namespace: p.namespace ? m[p.namespace] || undefined : undefined
      })
    }
  }
  return { objects, reasons }
}

/** Kind `Deployment` is resource `deployments`; a group suffix is dropped. */
function sameKind(kind: string, named: string): boolean {
  const k = kind.toLowerCase()
  const n = named.toLowerCase().split('.')[0]
  return n === k || n === `${k}s` || n === `${k}es` || (k.endsWith('y') && n === `${k.slice(0, -1)}ies`)
}

function names(pf: ObjectRef, helm: ObjectRef): boolean {
  if (helm.name !== undefined && pf.name !== helm.name) return false
  if (helm.kind !== undefined && (pf.kind === undefined || !sameKind(pf.kind, helm.kind))) return false
  return helm.name !== undefined || helm.kind !== undefined
}

export interface Agreement {
  agrees: boolean
  /** Why not, in words for the failure message. */
  why: string[]
}

/** Preflight agrees with helm upgrade: the same outcome, and each object or reason Helm's error names among preflight's failures. */
export function agreement(pf: PreflightSays, upgrade: CommandResult): Agreement {
  const helmApplied = upgrade.code === 0
  const why: string[] = []
  if (pf.wouldApply !== helmApplied)
    why.push(`preflight says wouldApply=${pf.wouldApply}, helm upgrade ${helmApplied ? 'applied' : `failed (exit ${upgrade.code})`}`)
  if (!helmApplied) {
    const named = helmNames(upgrade.stderr)
    if (named.objects.length === 0 && named.reasons.length === 0) why.push("the comparison cannot read which object or reason helm's error names")
    for (const o of named.objects) {
      const found = pf.failing.some((f) => names(f, o)) || (o.name !== undefined && pf.blocks.some((b) => b.includes(o.name as string)))
      if (!found) why.push(`helm names ${o.kind ?? '?'} ${o.name ?? '?'}, which preflight does not name as failing`)
    }
    for (const source of named.reasons) {
      const reason = RELEASE_REASONS.find((r) => r.helm.source === source) as ReleaseReason
      if (!pf.blocks.some((b) => reason.block.test(b))) why.push(`helm fails the release: /${source}/, and no preflight block names it`)
    }
  }
  return { agrees: why.length === 0, why: [...new Set(why)] }
}
