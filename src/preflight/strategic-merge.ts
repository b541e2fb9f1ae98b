// The merge half of client-go's three-way strategic merge patch as Helm 3 computes it: the
// deletions (original → modified) and the delta (live → modified, no deletions) are merged into
// one patch by strategicpatch's mergeMap with MergeParallelList off, step for step (mergeMap,
// mergePatchIntoOriginal, mergeSlice, normalizeElementOrder, mergeSortedSlice). Items of a merged
// list meet by Go's == on their merge key, so with two items of one key the second merges into the
// first, as in Go. Pure but for the maps it is given, which it changes in place as Go does.
import { isDeepStrictEqual } from 'node:util'
import { HelmRefuses } from './go-order.ts'
import type { PatchSchema } from './patch-schema.ts'
import {
  deduplicateScalars,
  elementType,
  fieldOf,
  goType,
  has,
  indexIn,
  isMap,
  mergeKeyValue,
  normalizeSliceOrder,
  strategyOf,
  type Json,
  type JsonMap
} from './strategic-diff.ts'

const SET_ORDER = '$setElementOrder/'
const DELETE_FROM = '$deleteFromPrimitiveList/'

/** removeDirectives: the value without its `$patch` items and maps (false: the value itself was one). */
function withoutDirectives(v: Json): [Json, boolean] {
  if (isMap(v)) {
    if (has(v, '$patch')) return [null, false]
    for (const k of Object.keys(v)) {
      const [value, keep] = withoutDirectives(v[k])
      if (keep) v[k] = value
      else delete v[k]
    }
    return [v, true]
  }
  if (Array.isArray(v)) return [v.flatMap((item) => (([value, keep]) => (keep ? [value] : []))(withoutDirectives(item))), true]
  return [v, true]
}

/** The map in `list` whose merge key is `value` (Go's == on interfaces). */
function findByKey(list: Json[], mergeKey: string, value: Json): number {
  return list.findIndex((v) => {
    if (!isMap(v)) throw new HelmRefuses(`a list merged by ${mergeKey} holds an item that is not an object`)
    return has(v, mergeKey) && v[mergeKey] === value
  })
}

function partition(merged: Json[], by: Json[], mergeKey: string): { inPatch: Json[]; serverOnly: Json[] } {
  const present = mergeKey ? (v: Json) => findByKey(by, mergeKey, mergeKeyValue(v, mergeKey)) >= 0 : (v: Json) => by.includes(v)
  return { inPatch: merged.filter(present), serverOnly: merged.filter((v) => !present(v)) }
}

/** mergeSortedSlice: the server-only items put among the patch's by their places in serverOrder. */
function mergeSorted(left: Json[], right: Json[], serverOrder: Json[], mergeKey: string, kind: string): Json[] {
  const out: Json[] = []
  let i = 0
  let j = 0
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++])
    else if (j >= right.length) out.push(left[i++])
    else {
      const li = indexIn(serverOrder, left[i], mergeKey, kind)
      const ri = indexIn(serverOrder, right[j], mergeKey, kind)
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++])
      else out.push(right[j++])
    }
  }
  return out
}

function normalizeElementOrder(patch: Json[], serverOnly: Json[], patchOrder: Json[], serverOrder: Json[], mergeKey: string, kind: string): Json[] {
  const p = normalizeSliceOrder(patch, patchOrder, mergeKey, kind)
  const s = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind)
  return mergeSorted(s, p, serverOrder, mergeKey, kind)
}

function mergeSlice(original: Json[], patch: Json[], schema: PatchSchema | undefined, mergeKey: string): Json[] {
  if (original.length === 0 && patch.length === 0) return original
  const kind = elementType(original, patch)
  let base = original
  let merged: Json[]
  if (kind !== 'map') merged = deduplicateScalars([...original, ...patch])
  else {
    if (!mergeKey) throw new HelmRefuses('a list of objects is merged without a merge key')
    // mergeSliceWithSpecialElements: `$patch: delete` items take their key's items out; `$patch: replace` makes the patch the list.
    let items = patch.filter((v) => !(isMap(v) && has(v, '$patch')))
    let replace = false
    for (const v of patch) {
      if (!isMap(v) || !has(v, '$patch')) continue
      if (v.$patch === 'delete') {
        const key = mergeKeyValue(v, mergeKey)
        base = base.filter((o) => findByKey([o], mergeKey, key) < 0)
      } else if (v.$patch === 'replace') replace = true
      else throw new HelmRefuses(`a list item has $patch: ${String(v.$patch)}`)
    }
    if (replace) {
      base = items
      items = []
    }
    merged = [...base]
    for (const v of items) {
      const at = findByKey(merged, mergeKey, mergeKeyValue(v, mergeKey))
      if (at >= 0) merged[at] = mergeMap(merged[at] as JsonMap, v as JsonMap, schema)
      else merged.push(v)
    }
    patch = items
  }
  const { inPatch, serverOnly } = partition(merged, patch, mergeKey)
  return normalizeElementOrder(inPatch, serverOnly, patch, base, mergeKey, kind)
}

function mergeSliceHandler(original: Json, patch: Json, schema: PatchSchema | undefined, strategy: string, mergeKey: string): Json[] {
  if (!Array.isArray(original) || !Array.isArray(patch)) throw new HelmRefuses('a list meets a value that is not a list')
  return strategy === 'merge' ? mergeSlice(original, patch, schema, mergeKey) : patch
}

/** mergePatchIntoOriginal: each `$setElementOrder/<list>` of the patch, and its list, merged into the original first. */
function mergeOrderedLists(original: JsonMap, patch: JsonMap, schema: PatchSchema | undefined): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ORDER)) continue
    const order = patch[key]
    if (has(original, key)) {
      if (!isDeepStrictEqual(original[key], order)) throw new HelmRefuses(`the two halves of the patch order ${key} differently`)
    } else original[key] = order
    delete patch[key]
    if (!Array.isArray(order)) throw new HelmRefuses(`${key} is not a list`)
    const listKey = key.slice(SET_ORDER.length)
    const foundOriginal = has(original, listKey)
    const foundPatch = has(patch, listKey)
    const originalList = foundOriginal ? original[listKey] : []
    const patchList = foundPatch ? patch[listKey] : []
    if (!Array.isArray(originalList) || !Array.isArray(patchList)) throw new HelmRefuses(`${listKey} is not a list`)
    const field = schema?.field(listKey)
    const mergeKey = field?.mergeKey ?? ''
    const { strategy } = strategyOf(field?.strategies)
    validateOrder(patchList, order, mergeKey, listKey)
    let merged: Json[]
    if (foundOriginal && !foundPatch) merged = originalList
    else if (!foundOriginal && foundPatch) merged = withoutDirectives(patchList)[0] as Json[]
    else if (foundOriginal && foundPatch) merged = mergeSliceHandler(originalList, patchList, field?.items(), strategy, mergeKey)
    else continue
    const { inPatch, serverOnly } = partition(merged, order, mergeKey)
    original[listKey] = normalizeElementOrder(inPatch, serverOnly, order, originalList, mergeKey, elementType(originalList, patchList))
    delete patch[listKey]
  }
}

/** validatePatchWithSetOrderList: the patch's items come in the order's order. */
function validateOrder(patchList: Json[], order: Json[], mergeKey: string, listKey: string): void {
  if (order.length === 0 || patchList.length === 0) return
  const items = mergeKey ? patchList.filter((v) => !(isMap(v) && v.$patch === 'delete')) : patchList
  const same = (a: Json, b: Json): boolean => (mergeKey ? mergeKeyValue(a, mergeKey) === mergeKeyValue(b, mergeKey) : a === b)
  let p = 0
  let s = 0
  while (p < items.length && s < order.length) {
    if (isMap(items[p]) && has(items[p] as JsonMap, '$patch')) {
      p++
      continue
    }
    if (same(items[p], order[s])) p++
    s++
  }
  if (p < items.length && s >= order.length)
    throw new HelmRefuses(
      `the order in the patch list of ${listKey} doesn't match its $setElementOrder list${mergeKey ? ` (two of its items share a ${mergeKey} and stand apart)` : ''}`
    )
}

/** strategicpatch.mergeMap(original, patch, schema, MergeOptions{}): `patch` merged into `original`. */
export function mergeMap(original: JsonMap | undefined, patch: JsonMap, schema: PatchSchema | undefined): JsonMap {
  if (has(patch, '$patch')) {
    if (patch.$patch === 'replace') {
      delete patch.$patch
      return patch
    }
    if (patch.$patch === 'delete') return {}
    throw new HelmRefuses(`an object has $patch: ${String(patch.$patch)}`)
  }
  const out = original ?? {}
  if (has(patch, '$retainKeys')) {
    const retain = patch.$retainKeys
    delete patch.$retainKeys
    if (!has(out, '$retainKeys')) out.$retainKeys = retain
    else if (!isDeepStrictEqual(out.$retainKeys, retain)) throw new HelmRefuses('the two halves of the patch retain different keys')
  }
  mergeOrderedLists(out, patch, schema)
  for (const key of Object.keys(patch)) {
    const value = patch[key]
    if (key.startsWith(DELETE_FROM)) {
      out[key] = value
      continue
    }
    if (value === null) delete out[key]
    if (!has(out, key) || goType(out[key]) !== goType(value)) {
      const [v, keep] = withoutDirectives(value)
      if (keep) out[key] = v
      else delete out[key]
      continue
    }
    if (isMap(value)) {
      const field = fieldOf(schema, key)
      out[key] = strategyOf(field?.strategies).strategy === 'replace' ? value : mergeMap(out[key] as JsonMap, value, field)
    } else if (Array.isArray(value)) {
      const field = schema?.field(key)
      out[key] = mergeSliceHandler(out[key], value, field?.items(), strategyOf(field?.strategies).strategy, field?.mergeKey ?? '')
    } else {
      const [v, keep] = withoutDirectives(value)
      if (keep) out[key] = v
      else delete out[key]
    }
  }
  return out
}
