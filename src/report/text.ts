// The same summary for a terminal: aligned columns, the reason last (it is the long one).
import { inert } from '../text/workflow-commands.ts'
import { MAX_PREFLIGHT_ROWS, morePreflightRows, shownRows, type Summary } from './summary.ts'

// Terminal control characters from the cluster (a log line, say) must not reach the terminal:
// matching them is the point of this pattern. The CLI may run in a GitHub Actions step: nothing
// from the cluster may read as a workflow command there either.
// eslint-disable-next-line no-control-regex
const clean = (text: string): string => inert(text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '?').replace(/\n/g, ' '))

// Terminals draw ✅ and ❌ two columns wide, and the emoji variation selector takes none.
const WIDE = /[\u2705\u274c]/g
const width = (text: string): number => [...text.replace(/\ufe0f/g, '')].length + (text.match(WIDE)?.length ?? 0)

/** Aligned columns, the reason last (it is the long one). */
function table(columns: string[], rows: string[][]): string[] {
  const reason = columns.indexOf('Reason')
  const order = [...columns.keys()].filter((i) => i !== reason).concat(reason)
  const cells = [columns, ...rows].map((row) => order.map((i) => clean(row[i])))
  const widths = order.map((_, c) => Math.max(...cells.map((row) => width(row[c]))))
  return cells.map((row) => row.map((cell, c) => (c === row.length - 1 ? cell : cell + ' '.repeat(widths[c] - width(cell)))).join('  '))
}

export function renderText(s: Summary): string {
  const lines = [s.title, '='.repeat(s.title.length)]
  if (s.dryRun) lines.push('DRY RUN — nothing was changed.')
  lines.push(clean(s.headline.text))
  if (!s.headline.ok && s.headline.counts !== '') lines.push(s.headline.counts)
  if (s.took) lines.push(s.took)
  if (s.preflight) {
    const p = s.preflight
    lines.push('', `Preflight: ${clean(p.headline)}`, ...p.rows.slice(0, MAX_PREFLIGHT_ROWS).map((r) => `  ${r.mark}  ${clean(r.object)}  ${clean(r.reason)}`))
    const more = morePreflightRows(p)
    if (more) lines.push(`  ${more}`)
    lines.push(...p.remedies.map((r) => `  ${clean(r)}`))
  }
  if (s.rows.length > 0) {
    lines.push('')
    const shown = shownRows(s)
    if (shown.notable.length > 0) lines.push(...table(s.columns, shown.notable))
    if (shown.notableLeftOut > 0) lines.push(`… and ${shown.notableLeftOut} more like these: every Job is in the report file.`)
    if (shown.othersTotal > 0) {
      lines.push(
        '',
        `${shown.othersTotal} other Job(s)${shown.others.length < shown.othersTotal ? `, the first ${shown.others.length}` : ''}:`,
        ...table(s.columns, shown.others)
      )
      if (shown.others.length < shown.othersTotal) lines.push(`… and ${shown.othersTotal - shown.others.length} more: every Job is in the report file.`)
    }
  }
  for (const tail of s.tails) lines.push('', `Last lines of failed Job ${clean(tail.job)} (${clean(tail.file)}):`, ...tail.lines.map((l) => `  | ${clean(l)}`))
  if (s.errors.length > 0) lines.push('', 'Errors:', ...s.errors.map((e) => `  - ${clean(e)}`))
  if (s.warnings.length > 0) lines.push('', 'Warnings:', ...s.warnings.map((w) => `  - ${clean(w)}`))
  return `${lines.join('\n')}\n`
}
