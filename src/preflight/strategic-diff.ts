// The diff half of client-go's three-way strategic merge patch, as Helm 3 computes it
// (k8s.io/apimachinery/pkg/util/strategicpatch: diffMaps and the functions it calls), step for
// step, with Go's orders (go-order.ts): list items are paired by the printed value of their merge
// key after a sort, so two items with one key (a containerPort on TCP and on UDP) pair as Go pairs
// them. Where Go's code fails (a list item without its merge key, lists of mixed types) it throws
// HelmRefuses; where this port cannot follow Go's order, Unmatched (go-order.ts). Pure; it sorts
// lists of `original` in place, as Go does (copy first).
import { isDeepStrictEqual } from 'node:util'
import { goFormat, goLess, goSliceStable, goSortByKey, HelmRefuses } from './go-order.ts'
import type { PatchSchema } from './patch-schema.ts'

export type Json = unknown
export type JsonMap = Record<string, Json>

export const isMap = (v: Json): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v)
export const has = (m: JsonMap, key: string): boolean => Object.hasOwn(m, key)

/** What Go's reflect.TypeOf tells of a decoded JSON value. */
export function goType(v: Json): string {
  if (v === null || v === undefined) return 'nil'
  if (Array.isArray(v)) return 'slice'
  return isMap(v) ? 'map' : typeof v
}

/** A field the previous version set and the new one drops, with the value it had there. */
export interface RemovedField {
  /** `spec.podManagementPolicy`, `spec.template.spec.containers[web].env[DEBUG]`. */
  path: string
  before: Json
}

export interface DiffOptions {
  setElementOrder: boolean
  ignoreChangesAndAdditions: boolean
  ignoreDeletions: boolean
  buildRetainKeysDirective: boolean
  /** Where the deletions the diff makes are written down (the path of the map diffed). */
  removed?: RemovedField[]
}

/** A key that holds dots or slashes (a label key) is shown in brackets, as diff.ts shows it. */
export const child = (path: string, key: string): string => (/[./]/.test(key) ? `${path}[${key}]` : path ? `${path}.${key}` : key)

/** The schema of a map's field: a struct's field, or a Go map's values (LookupPatchMetadataForStruct). */
export const fieldOf = (schema: PatchSchema | undefined, key: string): PatchSchema | undefined => schema?.field(key) ?? schema?.items()

/** extractRetainKeysPatchStrategy: whether retainKeys is among the strategies, and the other one. */
export function strategyOf(strategies: string[] | undefined): { retainKeys: boolean; strategy: string } {
  const s = strategies ?? []
  if (s.length === 0) return { retainKeys: false, strategy: '' }
  if (s.length === 1) return s[0] === 'retainKeys' ? { retainKeys: true, strategy: '' } : { retainKeys: false, strategy: s[0] }
  if (s.length === 2 && s[0] === 'retainKeys') return { retainKeys: true, strategy: s[1] }
  if (s.length === 2 && s[1] === 'retainKeys') return { retainKeys: true, strategy: s[0] }
  throw new HelmRefuses(`unexpected patch strategy ${s.join(',')}`)
}

/** sliceElementType: the one Go type of every item of the lists; Go fails on mixed types, lists of lists and none at all. */
export function elementType(...lists: Json[][]): string {
  let type: string | undefined
  for (const list of lists) {
    for (const v of list) {
      const t = goType(v)
      if (t === 'slice' || t === 'nil') throw new HelmRefuses(`a list holds ${t === 'nil' ? 'a null item' : 'a list'}, which Helm's patch refuses`)
      if (type !== undefined && t !== type) throw new HelmRefuses("a list holds items of different types, which Helm's patch refuses")
      type = t
    }
  }
  if (type === undefined) throw new HelmRefuses("a merged list is empty on every side, which Helm's patch refuses")
  return type
}

/** The item's merge key value; Go fails when an item lacks it. */
export function mergeKeyValue(item: Json, mergeKey: string): Json {
  if (!isMap(item)) throw new HelmRefuses(`a list merged by ${mergeKey} holds an item that is not an object`)
  if (!has(item, mergeKey)) throw new HelmRefuses(`a list merged by ${mergeKey} holds an item without ${mergeKey}, which Helm's patch refuses`)
  return item[mergeKey]
}

/** index(): where `value` is in `list` (by its merge key value for maps, Go's == on interfaces), or -1. */
export function indexIn(list: Json[], value: Json, mergeKey: string, kind: string): number {
  const get = (v: Json): Json => (kind === 'map' ? (isMap(v) ? v[mergeKey] : null) : v)
  const wanted = get(value)
  return list.findIndex((v) => get(v) === wanted)
}

/** normalizeSliceOrder: `toSort` in the order of `order` (Go's stable sort, its less as written), delete directives last. */
export function normalizeSliceOrder(toSort: Json[], order: Json[], mergeKey: string, kind: string): Json[] {
  let items = toSort
  let toDelete: Json[] = []
  if (kind === 'map') {
    for (const item of [...toSort, ...order]) mergeKeyValue(item, mergeKey)
    items = toSort.filter((v) => !(isMap(v) && v.$patch === 'delete'))
    toDelete = toSort.filter((v) => isMap(v) && v.$patch === 'delete')
  }
  const rank = (v: Json): number => indexIn(order, v, mergeKey, kind)
  const less = (a: Json, b: Json): boolean => {
    const ia = rank(a)
    const ib = ia >= 0 ? rank(b) : -1
    return ia >= 0 && ib >= 0 ? ia < ib : true
  }
  return [...goSliceStable(items, less, rank, 'a merged list'), ...toDelete]
}

/** deduplicateScalars, as Go writes it (the last item takes a duplicate's place). */
export function deduplicateScalars(list: Json[]): Json[] {
  const s = [...list]
  let length = s.length - 1
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (s[i] === s[j]) {
        s[j] = s[length]
        s.length = length
        length--
        j--
      }
    }
  }
  return s
}

const sortScalars = (list: Json[]): Json[] => goSortByKey(list, goFormat, 'a list of values', true)

export function diffMaps(original: JsonMap, modified: JsonMap, schema: PatchSchema | undefined, o: DiffOptions, path: string): JsonMap {
  const patch: JsonMap = {}
  const retainKeys: string[] = []
  for (const [key, modifiedValue] of Object.entries(modified)) {
    if (o.buildRetainKeysDirective && modifiedValue !== null) retainKeys.push(key)
    if (!has(original, key)) {
      if (!o.ignoreChangesAndAdditions) patch[key] = modifiedValue
      continue
    }
    const originalValue = original[key]
    if (key === '$patch') {
      if (typeof originalValue !== 'string' || typeof modifiedValue !== 'string') throw new HelmRefuses('invalid value for $patch')
      if (originalValue !== modifiedValue) patch[key] = modifiedValue
      continue
    }
    if (goType(originalValue) !== goType(modifiedValue)) {
      if (!o.ignoreChangesAndAdditions) patch[key] = modifiedValue
      continue
    }
    if (isMap(originalValue)) mapDiff(key, originalValue, modifiedValue as JsonMap, patch, schema, o, path)
    else if (Array.isArray(originalValue)) sliceDiff(key, originalValue, modifiedValue as Json[], patch, schema, o, path)
    else replaceIfNotEqual(key, originalValue, modifiedValue, patch, o)
  }
  if (!o.ignoreDeletions) {
    for (const [key, before] of Object.entries(original)) {
      if (has(modified, key)) continue
      patch[key] = null
      if (before !== null) o.removed?.push({ path: child(path, key), before })
    }
  }
  const dropsAField = Object.entries(original).some(([k, v]) => v !== null && !has(modified, k))
  if (retainKeys.length > 0 && (Object.keys(patch).length > 0 || dropsAField)) patch.$retainKeys = sortScalars(retainKeys)
  return patch
}

function replaceIfNotEqual(key: string, original: Json, modified: Json, patch: JsonMap, o: DiffOptions): void {
  if (!o.ignoreChangesAndAdditions && !isDeepStrictEqual(original, modified)) patch[key] = modified
}

function mapDiff(key: string, original: JsonMap, modified: JsonMap, patch: JsonMap, schema: PatchSchema | undefined, o: DiffOptions, path: string): void {
  const field = fieldOf(schema, key)
  const { retainKeys, strategy } = strategyOf(field?.strategies)
  if (strategy === 'replace') {
    if (!o.ignoreChangesAndAdditions) patch[key] = modified
    return
  }
  const value = diffMaps(original, modified, field, { ...o, buildRetainKeysDirective: retainKeys }, child(path, key))
  if (Object.keys(value).length > 0) patch[key] = value
}

function sliceDiff(key: string, original: Json[], modified: Json[], patch: JsonMap, schema: PatchSchema | undefined, o: DiffOptions, path: string): void {
  const field = schema?.field(key)
  const { retainKeys, strategy } = strategyOf(field?.strategies)
  if (strategy !== 'merge') return replaceIfNotEqual(key, original, modified, patch, o)
  const lists = diffLists(original, modified, field?.items(), field?.mergeKey ?? '', { ...o, buildRetainKeysDirective: retainKeys }, child(path, key))
  if (lists.add.length > 0) patch[key] = lists.add
  if (lists.deletions.length > 0) patch[`$deleteFromPrimitiveList/${key}`] = lists.deletions
  if (lists.order.length > 0) patch[`$setElementOrder/${key}`] = lists.order
}

function diffLists(original: Json[], modified: Json[], schema: PatchSchema | undefined, mergeKey: string, o: DiffOptions, path: string) {
  if (original.length === 0) return { add: modified.length === 0 || o.ignoreChangesAndAdditions ? [] : modified, deletions: [], order: [] }
  const kind = elementType(original, modified)
  if (kind === 'map') {
    const { add, deletions } = diffListsOfMaps(original, modified, schema, mergeKey, o, path)
    const sameOrder = original.length === modified.length && original.every((item, i) => mergeKeyValue(item, mergeKey) === mergeKeyValue(modified[i], mergeKey))
    const patchList = [...normalizeSliceOrder(add, modified, mergeKey, kind), ...deletions]
    const order =
      o.setElementOrder && ((!o.ignoreChangesAndAdditions && (patchList.length > 0 || !sameOrder)) || (!o.ignoreDeletions && patchList.length > 0))
        ? modified.map((v) => ({ [mergeKey]: mergeKeyValue(v, mergeKey) }))
        : []
    return { add: patchList, deletions: [], order }
  }
  // Go sorts `original` in place here, and compares the sorted list with `modified` below.
  const sorted = sortScalars(original)
  original.splice(0, original.length, ...sorted)
  const { add, deletions } = diffListsOfScalars(original, modified, o, path)
  const changed = (!o.ignoreDeletions && deletions.length > 0) || (!o.ignoreChangesAndAdditions && !isDeepStrictEqual(original, modified))
  return { add: normalizeSliceOrder(add, modified, mergeKey, kind), deletions, order: o.setElementOrder && changed ? modified : [] }
}

/** The walk over two sorted lists by the printed value: equal, added (original > modified), removed. */
type Step = 'both' | 'added' | 'removed'
function step(inOriginal: boolean, inModified: boolean, original: string, modified: string): Step {
  if (inOriginal && inModified && original === modified) return 'both'
  if (!inOriginal || (inModified && goLess(modified, original))) return 'added'
  return 'removed'
}

function diffListsOfScalars(original: Json[], modified: Json[], o: DiffOptions, path: string) {
  const modifiedSorted = sortScalars(modified)
  const add: Json[] = []
  const deletions: Json[] = []
  let i = 0
  let j = 0
  while (i < original.length || j < modifiedSorted.length) {
    const inO = i < original.length
    const inM = j < modifiedSorted.length
    const s = step(inO, inM, inO ? goFormat(original[i]) : '', inM ? goFormat(modifiedSorted[j]) : '')
    if (s === 'both') {
      i++
      j++
    } else if (s === 'added') {
      if (!o.ignoreChangesAndAdditions) add.push(modifiedSorted[j])
      j++
    } else {
      if (!o.ignoreDeletions) deletions.push(original[i])
      i++
    }
  }
  const unique = deduplicateScalars(deletions)
  for (const d of unique) o.removed?.push({ path: `${path}[${goFormat(d)}]`, before: d })
  return { add, deletions: unique }
}

function diffListsOfMaps(original: Json[], modified: Json[], schema: PatchSchema | undefined, mergeKey: string, o: DiffOptions, path: string) {
  const byKey = (list: Json[]): Json[] =>
    list.length === 0 ? list : (elementType(list), goSortByKey(list, (v) => goFormat(isMap(v) ? v[mergeKey] : null), 'a merged list', false))
  const os = byKey(original)
  const ms = byKey(modified)
  const add: Json[] = []
  const deletions: Json[] = []
  let i = 0
  let j = 0
  while (i < os.length || j < ms.length) {
    const inO = i < os.length
    const inM = j < ms.length
    const ok = inO ? mergeKeyValue(os[i], mergeKey) : undefined
    const mk = inM ? mergeKeyValue(ms[j], mergeKey) : undefined
    const s = step(inO, inM, inO ? goFormat(ok) : '', inM ? goFormat(mk) : '')
    if (s === 'both') {
      const value = diffMaps(os[i] as JsonMap, ms[j] as JsonMap, schema, o, `${path}[${goFormat(mk)}]`)
      if (Object.keys(value).length > 0) add.push({ ...value, [mergeKey]: mk })
      i++
      j++
    } else if (s === 'added') {
      if (!o.ignoreChangesAndAdditions) add.push(ms[j])
      j++
    } else {
      if (!o.ignoreDeletions) {
        deletions.push({ [mergeKey]: ok, $patch: 'delete' })
        o.removed?.push({ path: `${path}[${goFormat(ok)}]`, before: os[i] })
      }
      i++
    }
  }
  return { add, deletions }
}
