// The patch Helm 3 (and Helm 4 on a client-side release) sends for an object that exists: a
// three-way merge of the previous release's version (original), the rendered one (modified) and the
// live object (pkg/kube/client.go createPatch: strategicpatch.CreateThreeWayMergePatch for built-in
// kinds, a JSON merge patch for the rest). What matters for the dry run is what the patch does:
// every field the chart renders is set, and every field the previous version set and the new one
// drops is removed (null, `$patch: delete` for an item of a merged list, `$deleteFromPrimitiveList`),
// so a dropped field is removed in the dry run as in the upgrade. Fields Helm would leave out
// because the live object already has them are sent anyway: setting a field to its value is no
// change. Pure.
import type { KubeObject, PatchType } from '../kube/manifest-client.ts'
import type { PatchSchema } from './patch-schema.ts'

type Json = unknown
const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A field the previous version set and the new one drops, with the value it had there. */
export interface RemovedField {
  /** `spec.podManagementPolicy`, `spec.template.spec.containers[web].env[DEBUG]`. */
  path: string
  before: Json
}

export interface Helm3Patch {
  patch: KubeObject
  removed: RemovedField[]
}

interface Walk {
  type: PatchType
  removed: RemovedField[]
}

/** A key that holds dots or slashes (a label key) is shown in brackets, as diff.ts shows it. */
const child = (path: string, key: string): string => (/[./]/.test(key) ? `${path}[${key}]` : path ? `${path}.${key}` : key)

const merges = (schema: PatchSchema | undefined): boolean => schema?.strategies.includes('merge') === true

function mergeMap(
  original: Record<string, Json> | undefined,
  modified: Record<string, Json>,
  schema: PatchSchema | undefined,
  path: string,
  retainKeys: boolean,
  walk: Walk
): Record<string, Json> {
  const out: Record<string, Json> = {}
  for (const [key, value] of Object.entries(modified)) {
    const field = schema?.field(key)
    out[key] = mergeValue(original?.[key], value, field, child(path, key), walk)
    // A merged list of plain values (finalizers): its dropped values are named beside it.
    const before = original?.[key]
    if (walk.type === 'strategic' && merges(field) && !field?.mergeKey && Array.isArray(before) && Array.isArray(value)) {
      const dropped = before.filter((b) => !isObject(b) && !value.includes(b))
      if (dropped.length > 0) {
        out[`$deleteFromPrimitiveList/${key}`] = dropped
        for (const d of dropped) walk.removed.push({ path: `${child(path, key)}[${String(d)}]`, before: d })
      }
    }
  }
  for (const [key, before] of Object.entries(original ?? {})) {
    if (key in modified || before === null || before === undefined) continue
    out[key] = null
    walk.removed.push({ path: child(path, key), before })
  }
  // A map whose field says retainKeys (a Deployment's strategy, a volume's source) keeps only the patch's keys.
  if (walk.type === 'strategic' && retainKeys) out.$retainKeys = Object.keys(modified).sort()
  return out
}

function mergeList(original: Json, modified: Json[], schema: PatchSchema, path: string, walk: Walk): Json[] {
  const key = schema.mergeKey
  if (!key) return modified
  const keyOf = (item: Json): string | undefined => (isObject(item) && item[key] !== undefined && item[key] !== null ? String(item[key]) : undefined)
  const before = new Map((Array.isArray(original) ? original : []).map((item) => [keyOf(item), item]))
  before.delete(undefined)
  const retainKeys = schema.strategies.includes('retainKeys')
  const out = modified.map((item) => {
    const k = keyOf(item)
    if (k === undefined || !isObject(item)) return item
    const previous = before.get(k)
    before.delete(k)
    return mergeMap(isObject(previous) ? previous : undefined, item, schema.items(), `${path}[${k}]`, retainKeys, walk)
  })
  // Items the previous version had and the new one drops: the rest of `before`.
  for (const [k, item] of before) {
    const itemKey = isObject(item) ? item[key] : k
    out.push({ [key]: itemKey, $patch: 'delete' })
    walk.removed.push({ path: `${path}[${k}]`, before: item })
  }
  return out
}

function mergeValue(original: Json, modified: Json, schema: PatchSchema | undefined, path: string, walk: Walk): Json {
  if (isObject(modified))
    return mergeMap(isObject(original) ? original : undefined, modified, schema, path, schema?.strategies.includes('retainKeys') === true, walk)
  // A JSON merge patch, and a strategic one for a list without the merge strategy, replace the list.
  if (Array.isArray(modified) && walk.type === 'strategic' && schema && merges(schema)) return mergeList(original, modified, schema, path, walk)
  return modified
}

/**
 * The patch for `modified` given the previous release's `original` (undefined: the object is new
 * to the release, and Helm compares the rendered object with itself: nothing is removed). Without
 * a schema (the OpenAPI document could not be read), lists are sent whole, as a two-way patch.
 */
export function helm3Patch(original: KubeObject | undefined, modified: KubeObject, type: PatchType, schema?: PatchSchema): Helm3Patch {
  const walk: Walk = { type, removed: [] }
  const patch = mergeMap(original, modified, schema, '', false, walk) as KubeObject
  return { patch, removed: walk.removed }
}
