// How two versions of an object differ, path by path, for the verdicts: `spec.replicas: 1 → 3`,
// `spec.volumeClaimTemplates[data].spec.resources.requests.storage: 1Gi → 2Gi`. Pure. Lists whose
// items have names (containers, volumeClaimTemplates, ports) are matched by name.

/** A value longer than this is cut with an ellipsis. */
export const MAX_VALUE = 40

type Json = unknown
const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** An item's name: `name`, or `metadata.name` (volumeClaimTemplates). */
function itemName(item: Json): string | undefined {
  if (!isObject(item)) return undefined
  if (typeof item.name === 'string') return item.name
  const meta = item.metadata
  return isObject(meta) && typeof meta.name === 'string' ? meta.name : undefined
}
const isNamedList = (v: Json): v is Json[] => Array.isArray(v) && v.length > 0 && v.every((i) => itemName(i) !== undefined)

export function show(value: Json): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text
}

/** A key that holds dots or slashes (a label key) is shown in brackets: `labels[app.kubernetes.io/name]`. */
export const child = (path: string, key: string): string => (/[./]/.test(key) ? `${path}[${key}]` : path ? `${path}.${key}` : key)

const same = (a: Json, b: Json): boolean =>
  isObject(a) || Array.isArray(a) || isObject(b) || Array.isArray(b) ? JSON.stringify(a) === JSON.stringify(b) : String(a) === String(b)

/** Paths whose values are never shown (a Secret's data): only whether each is added, changed or removed. */
export type Hidden = (path: string) => boolean

const absent = (v: Json): boolean => v === undefined || v === null

function walk(before: Json, after: Json, path: string, afterOnly: boolean, out: string[], hidden?: Hidden): void {
  if (hidden?.(path)) {
    if (absent(after)) {
      if (!afterOnly && !absent(before)) out.push(`${path}: removed`)
    } else if (absent(before)) out.push(`${path}: added`)
    else if (!same(before, after)) out.push(`${path}: changed`)
    return
  }
  if (absent(after)) {
    if (!afterOnly && !absent(before)) out.push(`${path}: removed`)
    return
  }
  if (absent(before)) {
    // Shown whole, an added object would show the hidden values under it: its keys are listed instead.
    if (hidden && isObject(after)) walk({}, after, path, afterOnly, out, hidden)
    else out.push(`${path}: added (${show(after)})`)
    return
  }
  if (isNamedList(before) && isNamedList(after)) {
    const byName = new Map(before.map((i) => [itemName(i), i]))
    for (const item of after) walk(byName.get(itemName(item)), item, `${path}[${itemName(item)}]`, afterOnly, out, hidden)
    if (!afterOnly) {
      const names = new Set(after.map(itemName))
      for (const item of before) if (!names.has(itemName(item))) out.push(`${path}[${itemName(item)}]: removed`)
    }
    return
  }
  if (isObject(before) && isObject(after)) {
    // Sorted, so the same change reads the same whatever the YAML's order.
    const keys = new Set([...Object.keys(after), ...(afterOnly ? [] : Object.keys(before))])
    for (const k of [...keys].sort()) walk(before[k], after[k], child(path, k), afterOnly, out, hidden)
    return
  }
  if (same(before, after)) return
  // An object turned scalar (or back) would be shown whole, hidden values and all.
  if (hidden && (typeof before === 'object' || typeof after === 'object')) out.push(`${path}: changed`)
  else out.push(`${path}: ${show(before)} → ${show(after)}`)
}

/**
 * The paths where `after` differs from `before`. With `afterOnly`, only what `after` sets counts:
 * a rendered manifest compared with a live object, whose other fields the API server defaulted.
 * Under a `hidden` path a change is named, never shown: `data.password: changed`.
 */
export function differences(before: Json, after: Json, path = '', afterOnly = false, hidden?: Hidden): string[] {
  const out: string[] = []
  walk(before, after, path, afterOnly, out, hidden)
  return out
}

/** The value at an API field path (`spec.clusterIPs[0]`, `spec.volumeClaimTemplates`), or undefined. */
export function valueAt(object: Json, path: string): Json {
  let at: Json = object
  for (const part of path.split(/\.|(?=\[)/).filter((p) => p !== '')) {
    const index = /^\[(\d+)\]$/.exec(part)
    if (index) at = Array.isArray(at) ? at[Number(index[1])] : undefined
    else at = isObject(at) ? at[part] : undefined
    if (at === undefined) return undefined
  }
  return at
}
