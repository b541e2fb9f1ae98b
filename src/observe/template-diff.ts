// A short, path-by-path account of how a rendered pod template differs from the live one, for the
// summary: `containers[migrate].image: registry.example/ledger:1.1 → 1.2`. Pure. It only explains
// the API server's verdict (the dry run decides), so it errs on the side of saying less: a field
// only the live Job has is skipped when the API server may have filled it in by default.
import type { V1PodTemplateSpec } from '@kubernetes/client-node'
import { cut } from '../text/shorten.ts'

/** Fields the API server defaults: absent from the rendered template, present on the live one, they are no change. */
const DEFAULTED = new Set([
  'imagePullPolicy',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'resources',
  'dnsPolicy',
  'schedulerName',
  'securityContext',
  'terminationGracePeriodSeconds',
  'enableServiceLinks',
  'preemptionPolicy',
  'priority',
  'defaultMode',
  'protocol',
  'scheme',
  'apiVersion',
  'timeoutSeconds',
  'periodSeconds',
  'successThreshold',
  'failureThreshold',
  'creationTimestamp'
])
/** Labels the API server generates into a Job's pod template when it creates the Job. */
const GENERATED_LABELS = new Set(['batch.kubernetes.io/controller-uid', 'batch.kubernetes.io/job-name', 'controller-uid', 'job-name'])
/** Fields whose keys are data (label keys, selectors): shown as `labels[app]`, not `labels.app`. */
const MAPS = new Set(['labels', 'annotations', 'nodeSelector'])
/** A value longer than this is cut with an ellipsis. */
const MAX_VALUE = 40

type Json = unknown
const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isNamedList = (v: Json): v is Record<string, Json>[] => Array.isArray(v) && v.length > 0 && v.every((i) => isObject(i) && typeof i.name === 'string')

function show(value: Json): string {
  const text = Array.isArray(value)
    ? `[${value.map((v) => (isObject(v) ? JSON.stringify(v) : String(v))).join(', ')}]`
    : isObject(value)
      ? JSON.stringify(value)
      : String(value)
  return cut(text, MAX_VALUE)
}

/** `registry.example/ledger:1.1 → 1.2` when only the tag changed; both in full otherwise. */
function showChange(key: string, live: Json, rendered: Json): string {
  if (key === 'image' && typeof live === 'string' && typeof rendered === 'string') {
    const at = (image: string): number => (image.lastIndexOf(':') > image.lastIndexOf('/') ? image.lastIndexOf(':') : -1)
    const [l, r] = [at(live), at(rendered)]
    if (l > 0 && r > 0 && live.slice(0, l) === rendered.slice(0, r)) return `${show(live)} → ${show(rendered.slice(r + 1))}`
  }
  return `${show(live)} → ${show(rendered)}`
}

const child = (path: string, key: string, parentKey: string): string => (MAPS.has(parentKey) ? `${path}[${key}]` : path ? `${path}.${key}` : key)

/** Whether a key only the live template has is no change (a default, a generated label). */
const liveOnlyIgnored = (key: string, parentKey: string): boolean =>
  MAPS.has(parentKey) ? parentKey === 'labels' && GENERATED_LABELS.has(key) : DEFAULTED.has(key)

/** An env-style entry ({name, value}): compared as its value, `env[NAME]: 1 → 2`. */
const valueOnly = (item: Record<string, Json>): boolean => Object.keys(item).every((k) => k === 'name' || k === 'value')

function diff(live: Json, rendered: Json, path: string, key: string, out: string[]): void {
  if (isNamedList(live) && isNamedList(rendered)) {
    const liveByName = new Map(live.map((i) => [i.name as string, i]))
    const renderedNames = new Set(rendered.map((i) => i.name as string))
    for (const item of rendered) {
      const at = `${path}[${item.name}]`
      const before = liveByName.get(item.name as string)
      if (!before) out.push(`${at}: added${valueOnly(item) && item.value !== undefined ? ` (${show(item.value)})` : ''}`)
      else if (valueOnly(item) && valueOnly(before)) {
        if (String(before.value ?? '') !== String(item.value ?? '')) out.push(`${at}: ${showChange(key, before.value ?? '', item.value ?? '')}`)
      } else diff(before, item, at, key, out)
    }
    for (const item of live) if (!renderedNames.has(item.name as string)) out.push(`${path}[${item.name}]: removed`)
    return
  }
  if (isObject(live) && isObject(rendered)) {
    // Sorted, so the summary lists a template's changes in the same order whatever the YAML's.
    for (const k of Object.keys(rendered).sort()) if (k !== 'name' || !path.endsWith(']')) diff(live[k], rendered[k], child(path, k, key), k, out)
    for (const [k, v] of Object.entries(live)) {
      if (k in rendered || v === undefined || v === null || liveOnlyIgnored(k, key)) continue
      // A map or struct only the live Job has: each of its entries, so generated ones are skipped.
      if (isObject(v)) diff(v, {}, child(path, k, key), k, out)
      else out.push(`${child(path, k, key)}: removed`)
    }
    return
  }
  if (rendered === undefined || rendered === null) {
    if (live !== undefined && live !== null && !liveOnlyIgnored(key, '')) out.push(`${path}: removed`)
    return
  }
  if (live === undefined || live === null) {
    out.push(`${path}: added (${show(rendered)})`)
    return
  }
  const same =
    isObject(live) || Array.isArray(live) || isObject(rendered) || Array.isArray(rendered)
      ? JSON.stringify(live) === JSON.stringify(rendered)
      : String(live) === String(rendered)
  if (!same) out.push(`${path}: ${showChange(key, live, rendered)}`)
}

/**
 * How `rendered` differs from `live`, one entry per path: pod spec fields from the root
 * (`containers[migrate].args`), template metadata under `metadata` (`metadata.labels[app]`).
 * Containers, init containers, env and volumes are matched by name.
 */
export function templateDiff(live: V1PodTemplateSpec | undefined, rendered: V1PodTemplateSpec | undefined): string[] {
  const out: string[] = []
  diff(live?.metadata ?? {}, rendered?.metadata ?? {}, 'metadata', 'metadata', out)
  diff(live?.spec ?? {}, rendered?.spec ?? {}, '', '', out)
  return out
}

/** The first `max` changes, then how many more: `a; b; c and 4 more`. */
export function summarizeChanges(changes: string[], max = 3): string {
  const shown = changes.slice(0, max).join('; ')
  return changes.length > max ? `${shown} and ${changes.length - max} more` : shown
}
