// Report, pure: a run's outcomes as job-summary Markdown and as the action's outputs.
import type { JobOutcome, OutcomeKind, RunResult } from '../execute/outcome.ts'
import { formatDuration } from '../settings/duration.ts'
import { escapeHtml, escapeMarkdown } from './markdown.ts'

/** One Job in an output: the JSON shape of the pruned, kept, waited and ttl-set outputs. */
export interface OutputJob {
  namespace: string
  name: string
  status: string
  reason: string
}

/** The list outputs: pruned, kept, waited and ttl-set. */
export type OutputLists = { pruned: OutputJob[]; kept: OutputJob[]; waited: OutputJob[]; 'ttl-set': OutputJob[] }

export interface Report {
  markdown: string
  /** JSON arrays of Jobs (each cut to OUTPUT_BYTES; the report file has them all), and their counts. */
  outputs: Record<string, string>
}

// GitHub caps a step summary at 1 MiB: with thousands of Jobs the table shows the rows that
// matter and a few of the rest, and the report file in logs-dir has every Job.
/** The whole table is shown up to this many Jobs. */
const ALL_ROWS_UP_TO = 50
/** Beyond, rows that matter (errors, blocked, waited, failed with logs) are shown up to this many… */
const MAX_NOTABLE_ROWS = 200
/** …and the first of the rest, collapsed. */
const MAX_OTHER_ROWS = 50
/** Errors and warnings listed in the summary; the log has them all. */
const MAX_PROBLEMS = 50
/** A list output holds as many Jobs as fit in this many bytes of JSON. */
export const OUTPUT_BYTES = 64 * 1024

const PRUNED: OutcomeKind[] = ['pruned', 'would-prune', 'gone']
const TTL_SET: OutcomeKind[] = ['ttl-set', 'would-set-ttl']

const ACTION_WORDS: Record<OutcomeKind, string> = {
  kept: 'kept',
  pruned: 'pruned',
  'would-prune': 'would prune',
  gone: 'already gone',
  replaced: 'kept (replaced)',
  blocked: 'blocked',
  error: 'error',
  'ttl-set': 'TTL set',
  'would-set-ttl': 'would set TTL'
}

const toOutput = (o: JobOutcome): OutputJob => ({ namespace: o.namespace, name: o.name, status: o.status, reason: o.reason })

function where(result: RunResult): string {
  if (result.phase !== 'sweep') return `namespace ${result.namespace}`
  return result.namespace === 'all namespaces' ? 'all namespaces' : `namespaces ${result.namespace}`
}

/** The run in plain words and cells, before any rendering: what both renderers show. */
export interface Summary {
  title: string
  dryRun: boolean
  /** Empty when no Job was in scope. */
  headline: string
  columns: string[]
  rows: string[][]
  /** Per row: whether it is one that matters (error, blocked, waited, failed with logs). */
  notable: boolean[]
  /** Failed Jobs' log tails. */
  tails: { job: string; file: string; lines: string[] }[]
  errors: string[]
  warnings: string[]
  outputs: OutputLists
}

export function summarize(result: RunResult): Summary {
  const pruned = result.outcomes.filter((o) => PRUNED.includes(o.result))
  const ttlSet = result.outcomes.filter((o) => TTL_SET.includes(o.result))
  const kept = result.outcomes.filter((o) => !PRUNED.includes(o.result) && !TTL_SET.includes(o.result))
  const waited = result.outcomes.filter((o) => o.waited)
  const counts = [`${pruned.length} ${result.dryRun ? 'would be pruned' : 'pruned'}`, `${waited.length} waited`, `${kept.length} kept`]
  if (result.phase === 'post') counts.push(`${ttlSet.length} ${result.dryRun ? 'TTL would be set' : 'TTL set'}`)
  return {
    title: `job-sweeper: ${result.phase} phase in ${where(result)}`,
    dryRun: result.dryRun,
    headline: result.outcomes.length === 0 ? '' : counts.join(' · '),
    columns: ['Job', 'Namespace', 'Status', 'Age', 'Finished', 'Action', 'Reason', 'TTL / time left'],
    rows: result.outcomes.map((o) => [
      o.name,
      o.namespace,
      o.status,
      formatDuration(o.ageSeconds),
      o.finishedSecondsAgo === undefined ? '—' : `${formatDuration(o.finishedSecondsAgo)} ago`,
      o.waited ? `waited, ${ACTION_WORDS[o.result]}` : ACTION_WORDS[o.result],
      o.reason,
      o.retention ?? '—'
    ]),
    notable: result.outcomes.map((o) => o.result === 'error' || o.result === 'blocked' || o.waited || (o.status === 'failed' && o.logs !== undefined)),
    tails: result.outcomes.filter((o) => o.status === 'failed' && o.logs).flatMap((o) => (o.logs?.tails ?? []).map((t) => ({ job: o.name, ...t }))),
    errors: result.errors,
    warnings: result.warnings,
    outputs: { pruned: pruned.map(toOutput), kept: kept.map(toOutput), waited: waited.map(toOutput), 'ttl-set': ttlSet.map(toOutput) }
  }
}

function table(columns: string[], rows: string[][]): string[] {
  return [`| ${columns.join(' | ')} |`, `| ${columns.map(() => '---').join(' | ')} |`, ...rows.map((row) => `| ${row.map(escapeMarkdown).join(' | ')} |`)]
}

/**
 * Which rows a rendering shows: all of them when there are few (`others` empty); else the ones that
 * matter, then the first of the rest, and how many of each were left out.
 */
export interface ShownRows {
  notable: string[][]
  notableLeftOut: number
  /** The rest, shown collapsed. */
  others: string[][]
  othersTotal: number
}

export function shownRows(s: Summary): ShownRows {
  if (s.rows.length <= ALL_ROWS_UP_TO) return { notable: s.rows, notableLeftOut: 0, others: [], othersTotal: 0 }
  const notable = s.rows.filter((_, i) => s.notable[i])
  const others = s.rows.filter((_, i) => !s.notable[i])
  return {
    notable: notable.slice(0, MAX_NOTABLE_ROWS),
    notableLeftOut: Math.max(0, notable.length - MAX_NOTABLE_ROWS),
    others: others.slice(0, MAX_OTHER_ROWS),
    othersTotal: others.length
  }
}

function rowsMarkdown(s: Summary): string[] {
  const shown = shownRows(s)
  const lines: string[] = []
  if (shown.notable.length > 0) lines.push(...table(s.columns, shown.notable))
  if (shown.notableLeftOut > 0) lines.push('', `… and ${shown.notableLeftOut} more like these: every Job is in the report file.`)
  if (shown.othersTotal > 0) {
    const first = shown.others.length < shown.othersTotal ? `: the first ${shown.others.length}` : ''
    lines.push('', `<details><summary>${shown.othersTotal} other Job(s)${first}</summary>`, '', ...table(s.columns, shown.others))
    if (shown.others.length < shown.othersTotal) lines.push('', `… and ${shown.othersTotal - shown.others.length} more: every Job is in the report file.`)
    lines.push('', '</details>')
  }
  return lines
}

function problems(title: string, list: string[]): string[] {
  if (list.length === 0) return []
  const shown = list.slice(0, MAX_PROBLEMS).map((e) => `- ${escapeMarkdown(e)}`)
  if (list.length > MAX_PROBLEMS) shown.push(`- … and ${list.length - MAX_PROBLEMS} more (see the step's log)`)
  return ['', `### ${title}`, '', ...shown]
}

/** A list output as JSON of at most OUTPUT_BYTES: the first Jobs that fit. */
export function listOutput(jobs: OutputJob[]): string {
  let json = JSON.stringify(jobs)
  if (json.length <= OUTPUT_BYTES) return json
  const kept: string[] = []
  let size = 2
  for (const job of jobs) {
    const item = JSON.stringify(job)
    if (size + item.length + 1 > OUTPUT_BYTES) break
    kept.push(item)
    size += item.length + 1
  }
  json = `[${kept.join(',')}]`
  return json
}

/** The job summary (GitHub-flavoured Markdown) and the outputs. */
export function buildReport(result: RunResult): Report {
  const s = summarize(result)
  const lines: string[] = [`## ${escapeMarkdown(s.title)}`, '']
  if (s.dryRun) lines.push('> **DRY RUN — nothing was changed.**', '')
  if (s.rows.length === 0) {
    lines.push('No Jobs in scope: nothing to do.')
  } else {
    lines.push(`**${s.headline}**`, '', ...rowsMarkdown(s))
  }
  for (const tail of s.tails) {
    lines.push(
      '',
      `<details><summary>Last lines of failed Job ${escapeHtml(tail.job)}: ${escapeHtml(tail.file)}</summary>`,
      '',
      `<pre>${escapeHtml(tail.lines.join('\n'))}</pre>`,
      '',
      '</details>'
    )
  }
  lines.push(...problems('Errors', s.errors), ...problems('Warnings', s.warnings))
  const outputs: Record<string, string> = {}
  for (const [name, jobs] of Object.entries(s.outputs)) {
    outputs[name] = listOutput(jobs)
    outputs[`${name}-count`] = String(jobs.length)
  }
  return { markdown: `${lines.join('\n')}\n`, outputs }
}

/** The job summary of a run that stopped on an error (a bad input, an unreachable cluster). */
export function failureMarkdown(phase: string, message: string): string {
  return `## job-sweeper: ${escapeMarkdown(phase)} phase failed\n\n${escapeMarkdown(message)}\n\nNothing was changed after this error.\n`
}
