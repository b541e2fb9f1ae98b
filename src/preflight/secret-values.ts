// A Secret's values never reach any output (the step log, the job summary, --json, the report
// file): its verdict names the keys that change, never a value, in any encoding. classify.ts makes
// the verdict that way (the diff hides these paths); redactSecretValues is the second line of
// defence, for what it cannot shape: the API server's message, or a webhook's, may quote a value.
// Pure.
import type { KubeObject } from '../kube/manifest-client.ts'
import { child, differences, MAX_VALUE, valueAt, type Hidden } from './diff.ts'
import type { RemovedField } from './three-way.ts'

/** kubectl apply's copy of the whole object, every value of a Secret included. */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration'

/** What a value is replaced with wherever it appears. */
export const REDACTED = '<redacted>'

/** Shorter values are not redacted: scrubbing `a` or `on` would garble every message and hide nothing. */
const MIN_SECRET = 4

type Json = unknown
const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v)
const strings = (v: Json): Record<string, string> =>
  isObject(v) ? Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string')) : {}

export const isSecret = (o: KubeObject | undefined): boolean => o?.apiVersion === 'v1' && o.kind === 'Secret'

/** A Secret's paths whose values are hidden: each key of data and stringData, and kubectl's copy of the object. */
export const secretPaths: Hidden = (path) => /^(?:data|stringData)[.[]/.test(path) || path === `metadata.annotations[${LAST_APPLIED}]`

const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64')

/** The text a data value encodes; undefined for bytes that are no UTF-8 text (a keystore), which no message quotes as text. */
function decoded(value: string): string | undefined {
  const text = Buffer.from(value, 'base64').toString('utf8')
  return text.includes('\uFFFD') ? undefined : text
}

/**
 * What a rendered Secret changes under `field` of the live one (an immutable field's refusal names
 * `data`), key by key. The API server writes stringData into data, a stringData key over data's:
 * such a key is compared there, and named as the chart sets it (`stringData.password: changed`).
 */
export function secretChanges(live: KubeObject | undefined, rendered: KubeObject, field: string): string[] {
  const stringData = strings(rendered.stringData)
  const data = isObject(rendered.data) ? Object.fromEntries(Object.entries(rendered.data).filter(([k]) => !(k in stringData))) : rendered.data
  const changes = differences(valueAt(live, field), valueAt({ ...rendered, data }, field), field, true, secretPaths)
  if (field !== 'data') return changes
  const liveData = strings(live?.data)
  for (const [key, value] of Object.entries(stringData).sort(([a], [b]) => a.localeCompare(b))) {
    if (liveData[key] === undefined) changes.push(`${child('stringData', key)}: added`)
    else if (liveData[key] !== base64(value)) changes.push(`${child('stringData', key)}: changed`)
  }
  return changes
}

/** The data (base64) and stringData (plain) a Secret holds, and what its last-applied annotation holds. */
function heldValues(o: KubeObject | undefined): { data: string[]; stringData: string[] } {
  const held = { data: Object.values(strings(o?.data)), stringData: Object.values(strings(o?.stringData)) }
  const lastApplied = o?.metadata?.annotations?.[LAST_APPLIED]
  if (typeof lastApplied !== 'string') return held
  try {
    const applied = JSON.parse(lastApplied) as Json
    held.data.push(...Object.values(strings(isObject(applied) ? applied.data : undefined)))
    held.stringData.push(...Object.values(strings(isObject(applied) ? applied.stringData : undefined)))
  } catch {
    // Not JSON: the whole text is redacted instead.
    held.stringData.push(lastApplied)
  }
  return held
}

/** The forms an output may carry a value in: as is, base64, JSON- or Go-quoted, a line of it, and what show() cuts it to. */
function forms(value: string): string[] {
  return [value, base64(value), JSON.stringify(value).slice(1, -1), ...value.split(/\r?\n/).map((l) => l.trim()), value.slice(0, MAX_VALUE - 1)]
}

/**
 * Every value the Secrets hold (the rendered one, the live one, the dry run's answer, what a
 * three-way patch removed from data or stringData), in each form an output might carry it:
 * data's base64 and the text it encodes, stringData's text and its base64, and each of those
 * base64-encoded again.
 */
export function secretValues(objects: (KubeObject | undefined)[], removed: RemovedField[] = []): string[] {
  const plain: string[] = []
  const add = (data: string[], stringData: string[]): void => {
    for (const v of data) plain.push(v, ...[decoded(v)].filter((d): d is string => d !== undefined))
    for (const v of stringData) plain.push(v)
  }
  for (const o of objects) {
    const held = heldValues(o)
    add(held.data, held.stringData)
  }
  for (const r of removed) {
    // A key of data or stringData, or the whole map.
    const under = /^(data|stringData)(?=$|[.[])/.exec(r.path)?.[1]
    const values = typeof r.before === 'string' ? [r.before] : Object.values(strings(r.before))
    if (under === 'data') add(values, [])
    else if (under === 'stringData') add([], values)
  }
  const all = plain.flatMap(forms).flatMap((v) => [v, base64(v)])
  return [...new Set(all.filter((v) => v.length >= MIN_SECRET))]
}

/** `value` with every occurrence of each secret, in every string it holds, replaced by REDACTED. */
export function redactSecretValues<T>(value: T, secrets: string[]): T {
  if (secrets.length === 0) return value
  // One pass, longest first: a shorter secret is not looked for inside a longer one's REDACTED.
  const pattern = new RegExp(
    [...secrets]
      .sort((a, b) => b.length - a.length)
      .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('|'),
    'g'
  )
  const scrub = (v: Json): Json => {
    if (typeof v === 'string') return v.replace(pattern, REDACTED)
    if (Array.isArray(v)) return v.map(scrub)
    if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrub(x)]))
    return v
  }
  return scrub(value) as T
}
