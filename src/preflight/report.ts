// The preflight's result in words: a headline, then one row per object that matters, failing
// objects first; unchanged objects are counted (the report file and --json list them). Pure.
import { escapeMarkdown } from '../report/markdown.ts'
import type { Renderer } from '../settings/helm-output.ts'
import type { ReleaseMode } from './mode.ts'
import { failsUpgrade, reasonOf, recreatedByPre, recreatedPods, type ObjectVerdict } from './verdict.ts'

export interface PreflightResult {
  /** The namespace of objects whose manifest names none. */
  namespace: string
  mode: ReleaseMode
  verdicts: ObjectVerdict[]
  /** Why Helm refuses the upgrade before writing any object (a pending revision, a previous revision it cannot build). */
  blocked: string[]
  /** The release checked, if given. */
  release?: string
  /** What rendered the manifest, as far as its text tells. */
  renderer?: Renderer
  /** Helm hooks of the manifest, left out (Helm creates them at their hook). */
  hooks: string[]
  warnings: string[]
  /** API requests sent. */
  apiRequests?: number
}

/** How a row is marked, in the order rows are shown. */
const MARKS = ['fails', 'cleared by pre', 'not checked', 'new', 'changes'] as const
type Mark = (typeof MARKS)[number]

function markOf(v: ObjectVerdict): Mark | undefined {
  if (failsUpgrade(v)) return 'fails'
  if (v.clearedByPre) return 'cleared by pre'
  if (v.verdict.kind === 'not-checked') return 'not checked'
  if (v.verdict.kind === 'new') return 'new'
  if (v.verdict.kind === 'changes') return 'changes'
  return undefined
}

export const preflightFailed = (r: PreflightResult): boolean => r.blocked.length > 0 || r.verdicts.some(failsUpgrade)

/** `StatefulSet ns/db`, `ClusterRole reader`, `Job ns/seed (pre-upgrade hook)`. */
export const objectName = (v: ObjectVerdict): string =>
  `${v.kind} ${v.namespace ? `${v.namespace}/` : ''}${v.name}${v.hook ? ` (${v.hook.join(', ')} hook)` : ''}`

/** How the release itself is named in a row: `release app`. */
export const releaseName = (r: Pick<PreflightResult, 'release'>): string => `release ${r.release ?? '(not given)'}`

export interface PreflightRow {
  mark: Mark
  object: string
  reason: string
}

function clearedWords(v: ObjectVerdict): string {
  if (recreatedByPre(v)) return `pre deletes this StatefulSet with propagationPolicy Orphan (recreate-statefulsets), so ${recreatedPods(v)}`
  return 'pre deletes this Job, and the upgrade creates it anew'
}

/** The rows shown: every object but the unchanged ones, failing first, then in the manifest's order. */
export function preflightRows(r: PreflightResult): PreflightRow[] {
  const rows = r.verdicts.flatMap((v) => {
    const mark = markOf(v)
    const reason = v.clearedByPre
      ? `${reasonOf(v.verdict)}; ${clearedWords(v)}`
      : v.preLeaves
        ? `${reasonOf(v.verdict)}; pre does not clear it: ${v.preLeaves}`
        : reasonOf(v.verdict)
    return mark ? [{ mark, object: objectName(v), reason }] : []
  })
  const blocked = r.blocked.map((reason) => ({ mark: 'fails' as const, object: releaseName(r), reason }))
  return [...blocked, ...rows.sort((a, b) => MARKS.indexOf(a.mark) - MARKS.indexOf(b.mark))]
}

export function headline(r: PreflightResult): string {
  const failing = r.verdicts.filter(failsUpgrade).length
  const recreated = r.verdicts.filter((v) => v.clearedByPre && recreatedByPre(v)).length
  const cleared = r.verdicts.filter((v) => v.clearedByPre).length - recreated
  const unchanged = r.verdicts.filter((v) => v.verdict.kind === 'unchanged').length
  const counts = `${r.verdicts.length} object(s) checked, ${unchanged} unchanged`
  if (r.blocked.length > 0)
    return `helm upgrade would fail before writing any object: Helm refuses the release${failing > 0 ? `, and ${failing} object(s) would fail too` : ''} (${counts})`
  if (failing > 0) return `helm upgrade would fail on ${failing} object(s) (${counts})`
  const done = [cleared > 0 && `cleared ${cleared} Job(s)`, recreated > 0 && `recreated ${recreated} StatefulSet(s)`].filter((d) => d !== false)
  return `helm upgrade would apply${done.length > 0 ? ` once pre has ${done.join(' and ')}` : ''} (${counts})`
}

/**
 * What rendered the manifest, and whether that can be what the upgrade writes: only the upgrade's
 * own rendering runs `lookup` against the cluster, with `.Release.IsUpgrade` and its capabilities.
 */
export function renderedWords(renderer: Renderer | undefined): string {
  switch (renderer) {
    case undefined:
      return 'not given'
    case 'helm template':
      return 'helm template: lookup returned nothing and .Release.IsUpgrade was false (unless --is-upgrade), so a chart that uses them, or random values, renders otherwise in the upgrade; helm upgrade --install --dry-run=server renders what it writes'
    case 'yaml':
      return 'plain YAML (neither helm template nor a Helm dry run): checked as the upgrade would write it'
    default:
      return renderer.endsWith('--dry-run') ? `${renderer}: the upgrade's own rendering` : `${renderer} output: checked as given`
  }
}

// Terminal control characters from the cluster must not reach the terminal.
// eslint-disable-next-line no-control-regex
const clean = (text: string): string => text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '?').replace(/\n/g, ' ')

export function renderPreflightText(r: PreflightResult): string {
  const lines = ['job-sweeper preflight', '=====================', clean(headline(r)), `Writes: ${clean(r.mode.why)}`, `Rendered: ${renderedWords(r.renderer)}`]
  const rows = preflightRows(r)
  if (rows.length > 0) {
    const markWidth = Math.max(...rows.map((row) => row.mark.length))
    const objectWidth = Math.max(...rows.map((row) => row.object.length))
    lines.push('', ...rows.map((row) => `${row.mark.padEnd(markWidth)}  ${clean(row.object).padEnd(objectWidth)}  ${clean(row.reason)}`))
  }
  if (r.hooks.length > 0) lines.push('', `${r.hooks.length} Helm hook(s) not checked (Helm creates them at their hook): ${r.hooks.slice(0, 5).join(', ')}`)
  if (r.warnings.length > 0) lines.push('', 'Warnings:', ...r.warnings.map((w) => `  - ${clean(w)}`))
  return `${lines.join('\n')}\n`
}

export function renderPreflightMarkdown(r: PreflightResult): string {
  const icon = preflightFailed(r) ? '❌' : '✅'
  const lines = [
    `## job-sweeper preflight`,
    '',
    `${icon} ${escapeMarkdown(headline(r))}`,
    '',
    `Writes: ${escapeMarkdown(r.mode.why)}`,
    '',
    `Rendered: ${escapeMarkdown(renderedWords(r.renderer))}`
  ]
  const rows = preflightRows(r)
  if (rows.length > 0) {
    lines.push('', '| Verdict | Object | Reason |', '| --- | --- | --- |')
    for (const row of rows) lines.push(`| ${row.mark} | ${escapeMarkdown(row.object)} | ${escapeMarkdown(row.reason)} |`)
  }
  if (r.warnings.length > 0) lines.push('', '**Warnings**', '', ...r.warnings.map((w) => `- ${escapeMarkdown(w)}`))
  return `${lines.join('\n')}\n`
}
