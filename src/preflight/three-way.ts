// The patch Helm 3 (and Helm 4 on a client-side release) sends for a built-in kind's object that
// exists: pkg/kube/client.go createPatch, strategicpatch.CreateThreeWayMergePatch(original: the
// previous release's version, modified: the rendered one, current: the live object, overwrite).
// That is the delta from the live object to the rendered one without deletions
// (strategic-diff.ts), merged with the deletions from the previous version to the rendered one
// (strategic-merge.ts). An empty patch is no request at all. The port follows Go's code step for
// step, including how it pairs list items that share a merge key (ports by containerPort on TCP
// and UDP) and where Go's code gives up (HelmRefuses: two items of one key apart in their list,
// both changed); where the port cannot follow Go (Unmatched), the object is "not checked" rather
// than judged by a patch Helm would not send. Custom resources take a JSON merge patch instead (check.ts). Pure.
import type { KubeObject } from '../kube/manifest-client.ts'
import type { PatchSchema } from './patch-schema.ts'
import { diffMaps, type JsonMap, type RemovedField } from './strategic-diff.ts'
import { mergeMap } from './strategic-merge.ts'

export { HelmRefuses, Unmatched } from './go-order.ts'
export type { RemovedField } from './strategic-diff.ts'

export interface Helm3Patch {
  /** The patch; `{}` when Helm sends none. */
  patch: KubeObject
  /** What it removes that the previous version set: shown as `before → removed` when the write is refused. */
  removed: RemovedField[]
}

/**
 * Helm 3's strategic merge patch of `current` to `modified`, given the previous release's
 * `original` (undefined: the object is new to the release, or the previous release is unknown;
 * Helm then compares the rendered object with itself, and removes nothing). Without a schema (no
 * OpenAPI document), every list is replaced. Throws HelmRefuses where Helm's own code fails (then
 * so does the upgrade), Unmatched where Helm's patch cannot be shown.
 */
export function helm3Patch(original: KubeObject | undefined, modified: KubeObject, current: KubeObject, schema?: PatchSchema): Helm3Patch {
  // Go sorts some lists of its inputs in place and merges into the halves: each works on its own copy.
  const copy = (o: KubeObject): JsonMap => structuredClone(o) as JsonMap
  const delta = diffMaps(
    copy(current),
    copy(modified),
    schema,
    { ignoreDeletions: true, setElementOrder: true, ignoreChangesAndAdditions: false, buildRetainKeysDirective: false },
    ''
  )
  const removed: RemovedField[] = []
  const deletions = diffMaps(
    copy(original ?? modified),
    copy(modified),
    schema,
    { ignoreDeletions: false, setElementOrder: true, ignoreChangesAndAdditions: true, buildRetainKeysDirective: false, removed },
    ''
  )
  return { patch: mergeMap(deletions, delta, schema) as KubeObject, removed }
}
