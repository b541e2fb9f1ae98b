// Report, pure: a run's outcomes as job-summary Markdown and as the action's outputs.
import { jobKey } from '../execute/logs.ts'
import type { JobOutcome, OutcomeKind, PreflightSection, RunResult } from '../execute/outcome.ts'
import { ALL_NAMESPACES, whereWords } from '../observe/observed.ts'
import { formatDuration } from '../text/duration.ts'
import { inert } from '../text/workflow-commands.ts'
import { headlineOf, type Headline } from './headline.ts'
import { escapeHtml, escapeMarkdown } from './markdown.ts'

/** One Job in an output: the JSON shape of the pruned, gone, kept, waited and ttl-set outputs. */
export interface OutputJob {
  namespace: string
  name: string
  status: string
  reason: string
}

/** The list outputs: pruned, gone, kept, waited and ttl-set. */
export type OutputLists = { pruned: OutputJob[]; gone: OutputJob[]; kept: OutputJob[]; waited: OutputJob[]; 'ttl-set': OutputJob[] }

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

// The Jobs job-sweeper deleted. One someone else deleted first is `gone`, listed apart: `pruned`
// says what this run did (a workflow uploads the logs of what it pruned).
const PRUNED: OutcomeKind[] = ['pruned', 'would-prune']
const TTL_SET: OutcomeKind[] = ['ttl-set', 'would-set-ttl']

/** What happened to a Job, in the words of the Outcome column. */
function outcomeWords(o: JobOutcome, phase: RunResult['phase']): string {
  const words: Record<OutcomeKind, string> = {
    kept: 'kept',
    pruned: 'pruned',
    'would-prune': 'would prune',
    gone: 'already gone',
    replaced: 'kept (replaced)',
    blocked: '❌ blocked',
    error: phase === 'post' ? '❌ failed to set TTL' : '❌ failed to prune',
    'ttl-set': 'TTL set',
    'would-set-ttl': 'would set TTL'
  }
  const done = words[o.result]
  const waited = o.waitedSeconds === undefined ? 'waited' : o.waitedSeconds < 1 ? 'waited under 1s' : `waited ${rough(Math.round(o.waitedSeconds))}`
  if (!o.waited) return done
  return ['blocked', 'error'].includes(o.result) ? `${done} (${waited})` : `${waited}, then ${done}`
}

const toOutput = (o: JobOutcome): OutputJob => ({ namespace: o.namespace, name: o.name, status: o.status, reason: o.reason })

function where(result: RunResult): string {
  if (result.phase !== 'sweep') return `namespace ${whereWords(result.namespace)}`
  return result.namespace === ALL_NAMESPACES ? 'all namespaces' : `namespaces ${result.namespace}`
}

/** The title: the phase, where, and which scope on which cluster (`— release shop, context prod`). */
function titleOf(result: RunResult): string {
  const of = [result.scope, result.context && `context ${result.context}`].filter((w): w is string => typeof w === 'string' && w !== '')
  return `job-sweeper: ${result.phase} phase in ${where(result)}${of.length > 0 ? ` — ${of.join(', ')}` : ''}`
}

/** How long the run took, when it says when it started and ended. */
function tookWords(result: RunResult): string | undefined {
  if (result.startedAt === undefined || result.endedAt === undefined) return undefined
  const seconds = Math.max(0, Math.round((new Date(result.endedAt).getTime() - new Date(result.startedAt).getTime()) / 1000))
  const waits = result.outcomes.map((o) => o.waitedSeconds ?? 0)
  const longest = Math.round(Math.max(0, ...waits))
  return `Took ${rough(seconds)}${longest >= 1 ? `, the longest wait on a Job ${rough(longest)}` : ''}.`
}

/**
 * Where the saved logs are, for the Logs column: a runner's directory is gone when its job ends,
 * so the summary names what stays: the artifact upload-logs made (with its link), or the bucket.
 */
export type LogsPlace =
  | { kind: 'artifact'; name: string; url?: string }
  | { kind: 'bucket'; url: string }
  /** A directory; `runner`: the action's, which is gone when the job ends. */
  | { kind: 'dir'; runner?: boolean }

function logsColumn(place: LogsPlace): string {
  switch (place.kind) {
    case 'artifact':
      return `Logs (in artifact ${place.name})`
    case 'bucket':
      return 'Logs (in the bucket)'
    case 'dir':
      return place.runner ? 'Logs (in logs-dir, on the runner until the job ends)' : 'Logs (in logs-dir)'
  }
}

/** The two largest units of a duration: 2m5s, 1d3h. */
const rough = (seconds: number): string => /^(\d+[a-z]){1,2}/.exec(formatDuration(seconds))?.[0] ?? '0s'

/** When the Job finished: its clock time in UTC (with the date unless the run ended that day), and how long before the run ended. */
function finishedWords(o: JobOutcome, endedAt: Date | undefined): string {
  if (o.status === 'running') return `still running (${rough(o.ageSeconds)})`
  if (o.status === 'stuck') return `never started (${rough(o.ageSeconds)})`
  if (o.finishedAt === undefined) return o.finishedSecondsAgo === undefined ? '—' : `${rough(o.finishedSecondsAgo)} ago`
  const at = new Date(o.finishedAt)
  const iso = at.toISOString()
  const sameDay = endedAt !== undefined && iso.slice(0, 10) === endedAt.toISOString().slice(0, 10)
  const clock = sameDay ? `${iso.slice(11, 19)} UTC` : `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`
  return endedAt === undefined ? clock : `${clock} (${rough((endedAt.getTime() - at.getTime()) / 1000)} ago)`
}

/**
 * Where the Job's logs were saved, relative to logs-dir: the file, or the Job's folder when there
 * are several; and how many containers never ran (they have a note there instead of a log).
 */
function logsWords(o: JobOutcome, place: LogsPlace): string {
  const files = o.logs?.files ?? []
  const neverRan = o.logs?.neverRan?.length ?? 0
  const gone = o.logs?.gone?.length ?? 0
  if (files.length === 0 && neverRan === 0 && gone === 0) return '—'
  const key = files.length === 1 ? files[0].file : `${jobKey(o)}/`
  // In a bucket, the whole key: what `aws s3 cp` takes.
  const where = place.kind === 'bucket' ? `${place.url}/${key}` : key
  const counts = [
    files.length > 1 ? `${files.length} files` : '',
    neverRan > 0 ? `${neverRan} container(s) never ran` : '',
    gone > 0 ? `${gone} log(s) no longer on the node` : ''
  ].filter((c) => c !== '')
  return counts.length > 0 ? `${where} (${counts.join('; ')})` : where
}

/** The run in plain words and cells, before any rendering: what both renderers show. */
export interface Summary {
  title: string
  /** `Took 2m5s, the longest wait on a Job 1m58s.`, when the run says when it started. */
  took?: string
  /** The Logs column's link: the artifact's page, when upload-logs made one. */
  logsLink?: string
  dryRun: boolean
  /** The outcome in words: ✅ and the counts, or ❌ and what went wrong. */
  headline: Headline
  columns: string[]
  /** One per Job; empty when no Job was in scope. */
  rows: string[][]
  /** Columns that hold paths (the renderers set them as code). */
  codeColumns: number[]
  /** Per row: whether it is one that matters (error, blocked, waited, failed with logs). */
  notable: boolean[]
  /** Failed Jobs' log tails. */
  tails: { job: string; file: string; lines: string[] }[]
  errors: string[]
  warnings: string[]
  outputs: OutputLists
  /** Pre with a manifest: its preflight of the rendered release. */
  preflight?: PreflightSection
}

export function summarize(result: RunResult, place: LogsPlace = { kind: 'dir' }): Summary {
  const pruned = result.outcomes.filter((o) => PRUNED.includes(o.result))
  const gone = result.outcomes.filter((o) => o.result === 'gone')
  const ttlSet = result.outcomes.filter((o) => TTL_SET.includes(o.result))
  const kept = result.outcomes.filter((o) => !PRUNED.includes(o.result) && !TTL_SET.includes(o.result) && o.result !== 'gone')
  const waited = result.outcomes.filter((o) => o.waited)
  const endedAt = result.endedAt === undefined ? undefined : new Date(result.endedAt)
  // One namespace is in the title already; the pre phase sets no TTL.
  const namespaces = new Set(result.outcomes.map((o) => o.namespace)).size > 1
  const ttl = result.phase === 'post' ? 'TTL' : result.phase === 'sweep' ? 'TTL / time left' : undefined
  const logsHeader = logsColumn(place)
  const columns = ['Job', namespaces && 'Namespace', 'Status', 'Outcome', 'Finished', ttl, logsHeader, 'Reason']
  const cells = (o: JobOutcome): (string | undefined)[] => [
    o.name,
    namespaces ? o.namespace : undefined,
    o.status,
    outcomeWords(o, result.phase),
    finishedWords(o, endedAt),
    ttl && (o.retention ?? '—'),
    logsWords(o, place),
    o.reason
  ]
  const shown = columns.map((c) => typeof c === 'string')
  return {
    title: titleOf(result),
    took: tookWords(result),
    logsLink: place.kind === 'artifact' ? place.url : undefined,
    dryRun: result.dryRun,
    headline: headlineOf(result),
    columns: columns.filter((c): c is string => typeof c === 'string'),
    rows: result.outcomes.map((o) => cells(o).filter((_, i) => shown[i]) as string[]),
    codeColumns: [columns.filter((c) => typeof c === 'string').indexOf(logsHeader)],
    notable: result.outcomes.map((o) => o.result === 'error' || o.result === 'blocked' || o.waited || (o.status === 'failed' && o.logs !== undefined)),
    tails: result.outcomes.filter((o) => o.status === 'failed' && o.logs).flatMap((o) => (o.logs?.tails ?? []).map((t) => ({ job: o.name, ...t }))),
    errors: result.errors,
    warnings: result.warnings,
    preflight: result.preflight,
    outputs: { pruned: pruned.map(toOutput), gone: gone.map(toOutput), kept: kept.map(toOutput), waited: waited.map(toOutput), 'ttl-set': ttlSet.map(toOutput) }
  }
}

function table(s: Summary, rows: string[][]): string[] {
  const cell = (text: string, i: number): string => (s.codeColumns.includes(i) && text !== '—' ? `<code>${escapeMarkdown(text)}</code>` : escapeMarkdown(text))
  // The Logs column's header links the artifact; an artifact's name is the workflow's, not the cluster's.
  const header = (c: string, i: number): string =>
    s.logsLink !== undefined && s.codeColumns.includes(i) ? `[${escapeMarkdown(c)}](${s.logsLink})` : escapeMarkdown(c)
  return [`| ${s.columns.map(header).join(' | ')} |`, `| ${s.columns.map(() => '---').join(' | ')} |`, ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`)]
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
  if (shown.notable.length > 0) lines.push(...table(s, shown.notable))
  if (shown.notableLeftOut > 0) lines.push('', `… and ${shown.notableLeftOut} more like these: every Job is in the report file.`)
  if (shown.othersTotal > 0) {
    const first = shown.others.length < shown.othersTotal ? `: the first ${shown.others.length}` : ''
    lines.push('', `<details><summary>${shown.othersTotal} other Job(s)${first}</summary>`, '', ...table(s, shown.others))
    if (shown.others.length < shown.othersTotal) lines.push('', `… and ${shown.othersTotal - shown.others.length} more: every Job is in the report file.`)
    lines.push('', '</details>')
  }
  return lines
}

/** The preflight rows shown; the preflight report file has every object. */
export const MAX_PREFLIGHT_ROWS = 20

/** The line under the preflight rows shown, when some are not: where the others are. */
export const morePreflightRows = (p: PreflightSection): string | undefined =>
  p.rows.length > MAX_PREFLIGHT_ROWS
    ? `… and ${p.rows.length - MAX_PREFLIGHT_ROWS} more: every object is in job-sweeper-preflight.json in logs-dir.`
    : undefined

function preflightMarkdown(p: PreflightSection): string[] {
  const lines = ['', '### Preflight of the rendered release', '', `${p.failed ? '❌' : '✅'} ${escapeMarkdown(p.headline)}`]
  if (p.rows.length > 0) lines.push('', '| Verdict | Object | Reason |', '| --- | --- | --- |')
  for (const row of p.rows.slice(0, MAX_PREFLIGHT_ROWS)) lines.push(`| ${row.mark} | ${escapeMarkdown(row.object)} | ${escapeMarkdown(row.reason)} |`)
  const more = morePreflightRows(p)
  if (more) lines.push('', more)
  if (p.remedies.length > 0) lines.push('', ...p.remedies.map((r) => `- ${escapeMarkdown(r)}`))
  return lines
}

function problems(title: string, list: string[]): string[] {
  if (list.length === 0) return []
  const shown = list.slice(0, MAX_PROBLEMS).map((e) => `- ${escapeMarkdown(e)}`)
  if (list.length > MAX_PROBLEMS) shown.push(`- … and ${list.length - MAX_PROBLEMS} more (see the step's log)`)
  return ['', `### ${title}`, '', ...shown]
}

/** A list output as JSON of at most OUTPUT_BYTES: the first Jobs that fit (never the whole list at once). */
export function listOutput(jobs: OutputJob[]): string {
  const kept: string[] = []
  let size = 2
  for (const job of jobs) {
    const item = JSON.stringify(job)
    if (size + item.length + (kept.length > 0 ? 1 : 0) > OUTPUT_BYTES) break
    size += item.length + (kept.length > 0 ? 1 : 0)
    kept.push(item)
  }
  return `[${kept.join(',')}]`
}

/** The job summary (GitHub-flavoured Markdown) and the outputs. */
export function buildReport(result: RunResult, place?: LogsPlace): Report {
  const s = summarize(result, place)
  const lines: string[] = [`## ${escapeMarkdown(s.title)}`, '']
  if (s.dryRun) lines.push('> **DRY RUN — nothing was changed.**', '')
  lines.push(`**${escapeMarkdown(s.headline.text)}**`)
  if (!s.headline.ok && s.headline.counts !== '') lines.push('', s.headline.counts)
  if (s.took) lines.push('', s.took)
  if (s.preflight) lines.push(...preflightMarkdown(s.preflight))
  if (s.rows.length > 0) lines.push('', ...rowsMarkdown(s))
  for (const tail of s.tails) {
    lines.push(
      '',
      `<details><summary>Last lines of failed Job ${escapeHtml(tail.job)}: ${escapeHtml(tail.file)}</summary>`,
      '',
      `<pre>${escapeHtml(tail.lines.map((l) => inert(l)).join('\n'))}</pre>`,
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

/**
 * What the run changed, for an error that comes after it (a report that could not be written):
 * "it pruned 3 Job(s): a, b, c", every name, or "it changed nothing".
 */
export function changesWords(result: RunResult): string {
  const kind: OutcomeKind = result.phase === 'post' ? 'ttl-set' : 'pruned'
  const changed = result.outcomes.filter((o) => o.result === kind)
  if (changed.length === 0) return 'it changed nothing (the Jobs are as they were)'
  const did = result.phase === 'post' ? 'set the TTL of' : 'deleted'
  return `it ${did} ${changed.length} Job(s): ${changed.map((o) => `${o.namespace}/${o.name}`).join(', ')}`
}

/** The job summary of a run that stopped on an error (a bad input, an unreachable cluster). */
export function failureMarkdown(phase: string, message: string): string {
  return `## job-sweeper: ${escapeMarkdown(phase)} phase failed\n\n${escapeMarkdown(message)}\n\nNothing was changed after this error.\n`
}
