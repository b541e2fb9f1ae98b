// The previous revision as `helm upgrade` uses it (pkg/action/upgrade.go performUpgrade): Helm
// builds its manifest's objects first, so a kind the cluster no longer serves there (the usual
// state after a cluster upgrade) makes the upgrade fail before anything is written; the objects it
// holds are the originals of a client-side patch; and a rendered object it does not hold is new to
// the release, so a live namesake is adopted only when it carries this release's ownership
// metadata (existingResourceConflict → checkOwnership).
import type { KubeObject, ManifestClient } from '../kube/manifest-client.ts'
import { renderedRelease } from '../settings/rendered-release.ts'

/** The previous revision's objects, by the key Helm matches originals with (ResourceList.Get: group, kind, namespace, name). */
export type PreviousObjects = Map<string, KubeObject>

const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.split('/')[0] : '')

/** Helm matches an object with its previous version by group, kind, namespace and name (isMatchingInfo). */
export function identity(o: KubeObject, namespace: string): string {
  return `${groupOf(o.apiVersion ?? '')}/${o.kind}/${o.metadata?.namespace ?? namespace}/${o.metadata?.name}`
}

/**
 * Which rendered objects the upgrade counts as new to the release: its objectKey adds the version,
 * so an object whose apiVersion moved is new to it too (and is adopted, being the release's own).
 */
const objectKey = (o: KubeObject, namespace: string): string => `${o.apiVersion}/${o.kind}/${o.metadata?.namespace ?? namespace}/${o.metadata?.name}`

/** The previous manifest's objects; undefined (with a warning) when it does not parse. */
export function previousObjects(manifest: string, warn: (m: string) => void): KubeObject[] | undefined {
  try {
    // A release's manifest holds no hooks (Helm keeps those apart); a List is taken apart as in the rendering.
    return renderedRelease(manifest).objects
  } catch (e) {
    // The parser's message quotes the lines around the error, which may hold a Secret's values: its first line only.
    warn(`preflight could not parse the previous revision's manifest (${(e instanceof Error ? e.message : String(e)).split('\n')[0]}): a two-way patch`)
    return undefined
  }
}

export const byIdentity = (objects: KubeObject[], namespace: string): PreviousObjects => new Map(objects.map((o) => [identity(o, namespace), o]))

/**
 * Why Helm cannot build the previous revision's objects, in its words and ours, or undefined: every
 * kind there is served. Helm 3 says "current release manifest contains removed kubernetes api(s)",
 * Helm 4 "unable to build kubernetes objects from current release manifest: … no matches for kind".
 */
export async function unservedInPrevious(client: ManifestClient, objects: KubeObject[], revision: number | undefined): Promise<string | undefined> {
  const kinds = [...new Map(objects.map((o) => [`${o.kind} in ${o.apiVersion}`, o])).entries()]
  const served = await Promise.all(kinds.map(async ([, o]) => (await client.resourceFor(o.apiVersion ?? '', o.kind ?? '')) !== 'not-served'))
  const missing = kinds.filter((_, i) => !served[i]).map(([what]) => what)
  if (missing.length === 0) return undefined
  const shown = missing.slice(0, 3).join(', ') + (missing.length > 3 ? ` and ${missing.length - 3} more` : '')
  return (
    `unable to build kubernetes objects from current release manifest: revision ${revision ?? '?'} holds ${shown}, which the cluster does not serve ` +
    `(current release manifest contains removed kubernetes api(s); the helm-mapkubeapis plugin rewrites the release record)`
  )
}

/** The rendered objects the previous revision did not hold (all of them for an install). */
export function newToRelease(rendered: KubeObject[], previous: KubeObject[] | undefined, namespace: string): Set<KubeObject> {
  const before = new Set((previous ?? []).map((o) => objectKey(o, namespace)))
  return new Set(rendered.filter((o) => !before.has(objectKey(o, namespace))))
}

/**
 * Why Helm will not adopt the live object into `release` (checkOwnership's words), or undefined:
 * it carries the label `app.kubernetes.io/managed-by: Helm` and the release's name and namespace.
 */
export function ownershipProblem(live: KubeObject, release: string, releaseNamespace: string): string | undefined {
  const requireValue = (meta: Record<string, string> | undefined, key: string, value: string): string | undefined => {
    const actual = meta?.[key]
    if (actual === undefined) return `missing key "${key}": must be set to "${value}"`
    return actual === value ? undefined : `key "${key}" must equal "${value}": current value is "${actual}"`
  }
  const problems = [
    requireValue(live.metadata?.labels, 'app.kubernetes.io/managed-by', 'Helm'),
    requireValue(live.metadata?.annotations, 'meta.helm.sh/release-name', release),
    requireValue(live.metadata?.annotations, 'meta.helm.sh/release-namespace', releaseNamespace)
  ].filter((p) => p !== undefined)
  return problems.length === 0 ? undefined : `invalid ownership metadata; ${problems.join('; ')}`
}
