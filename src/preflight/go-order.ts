// How Go orders and prints the values of a decoded JSON document, where Helm 3's patch depends on
// it: client-go's strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch) compares list
// items by `fmt.Sprintf("%v", mergeKeyValue)` and sorts them with sort.Sort and sort.SliceStable.
// sort.Sort is not stable, and the patch code's less is `a <= b` (sort.StringsAreSorted of the
// pair), so items whose keys print alike (a containerPort on TCP and on UDP) come out in an order
// only Go's algorithm decides: for up to 12 items an insertion sort, which this file reproduces;
// above that a pattern-defeating quicksort, which it does not, and says so (Unmatched). Pure.

/** Helm 3's patch cannot be shown equal to ours for this object: why, in a user's words. */
export class Unmatched extends Error {}

/** Helm 3's own patch code fails on the object (the upgrade fails with `failed to create patch`): Go's reason. */
export class HelmRefuses extends Error {}

/** Go's `%v` of a JSON value decoded into interface{} (float64, string, bool, nil). */
export function goFormat(value: unknown): string {
  if (value === null || value === undefined) return '<nil>'
  if (typeof value === 'number') return goFloat(value)
  if (typeof value === 'string' || typeof value === 'boolean') return String(value)
  throw new Unmatched(`a list is merged by a key whose value is not a plain value (${JSON.stringify(value)})`)
}

/** `%v` of a float64: %g with the shortest digits, so an exponent below -4 or from 6 on prints as 1e+06, 1.5e-05. */
function goFloat(v: number): string {
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN'
  if (v === 0) return Object.is(v, -0) ? '-0' : '0'
  const [mantissa, exp] = v.toExponential().split('e')
  const e = Number(exp)
  if (e < -4 || e >= 6) return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`
  return String(v)
}

/** Go's string order: byte-wise over UTF-8. */
export function goLess(a: string, b: string): boolean {
  return Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0
}

/** sort.StringsAreSorted([a, b]): the patch code's "less", which holds for equal strings too. */
const sortedPair = (a: string, b: string): boolean => !goLess(b, a)

/**
 * sort.Sort over items by the string `key` gives, with the patch code's `a <= b`: Go's insertion
 * sort up to 12 items (it swaps equal neighbours, so a run of equal keys comes out reversed). Above
 * that, only when no two keys are equal, or when items with equal keys cannot be told apart
 * (`tiesAlike`: plain values that print alike are alike), since every sort then agrees.
 */
export function goSortByKey<T>(items: readonly T[], key: (item: T) => string, what: string, tiesAlike: boolean): T[] {
  const out = [...items]
  const keys = out.map(key)
  if (out.length > 12) {
    if (!tiesAlike && new Set(keys).size !== keys.length)
      throw new Unmatched(
        `${what} has ${out.length} items and two with the same key: Go's unstable sort decides their order, which this check does not reproduce`
      )
    return out
      .map((item, i) => ({ item, k: keys[i] }))
      .sort((a, b) => (goLess(a.k, b.k) ? -1 : goLess(b.k, a.k) ? 1 : 0))
      .map((x) => x.item)
  }
  for (let i = 1; i < out.length; i++) {
    for (let j = i; j > 0 && sortedPair(keys[j], keys[j - 1]); j--) {
      ;[out[j], out[j - 1]] = [out[j - 1], out[j]]
      ;[keys[j], keys[j - 1]] = [keys[j - 1], keys[j]]
    }
  }
  return out
}

/**
 * sort.SliceStable with `less(a, b)`: Go's insertion sort up to 20 items (exact whatever `less`
 * is); above that, only when `rank` places every item (a consistent order, which every stable sort
 * keeps alike).
 */
export function goSliceStable<T>(items: readonly T[], less: (a: T, b: T) => boolean, rank: (item: T) => number, what: string): T[] {
  const out = [...items]
  if (out.length > 20) {
    if (out.some((item) => rank(item) < 0))
      throw new Unmatched(
        `${what} has ${out.length} items, some outside the order they are sorted by: Go's merge sort decides their order, which this check does not reproduce`
      )
    return out
      .map((item, i) => ({ item, i, r: rank(item) }))
      .sort((a, b) => a.r - b.r || a.i - b.i)
      .map((x) => x.item)
  }
  for (let i = 1; i < out.length; i++) {
    for (let j = i; j > 0 && less(out[j], out[j - 1]); j--) [out[j], out[j - 1]] = [out[j - 1], out[j]]
  }
  return out
}
