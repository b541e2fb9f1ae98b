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

export interface Report {
  markdown: string
  /** JSON arrays of Jobs, and their counts. */
  outputs: { pruned: OutputJob[]; kept: OutputJob[]; waited: OutputJob[]; 'ttl-set': OutputJob[] }
}

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
  /** Failed Jobs' log tails. */
  tails: { job: string; file: string; lines: string[] }[]
  errors: string[]
  warnings: string[]
  outputs: Report['outputs']
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
    tails: result.outcomes.filter((o) => o.status === 'failed' && o.logs).flatMap((o) => (o.logs?.tails ?? []).map((t) => ({ job: o.name, ...t }))),
    errors: result.errors,
    warnings: result.warnings,
    outputs: { pruned: pruned.map(toOutput), kept: kept.map(toOutput), waited: waited.map(toOutput), 'ttl-set': ttlSet.map(toOutput) }
  }
}

/** The job summary (GitHub-flavoured Markdown) and the outputs. */
export function buildReport(result: RunResult): Report {
  const s = summarize(result)
  const lines: string[] = [`## ${escapeMarkdown(s.title)}`, '']
  if (s.dryRun) lines.push('> **DRY RUN — nothing was changed.**', '')
  if (s.rows.length === 0) {
    lines.push('No Jobs in scope: nothing to do.')
  } else {
    lines.push(`**${s.headline}**`, '')
    lines.push(`| ${s.columns.join(' | ')} |`, `| ${s.columns.map(() => '---').join(' | ')} |`)
    for (const row of s.rows) lines.push(`| ${row.map(escapeMarkdown).join(' | ')} |`)
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
  if (s.errors.length > 0) lines.push('', '### Errors', '', ...s.errors.map((e) => `- ${escapeMarkdown(e)}`))
  if (s.warnings.length > 0) lines.push('', '### Warnings', '', ...s.warnings.map((w) => `- ${escapeMarkdown(w)}`))
  return { markdown: `${lines.join('\n')}\n`, outputs: s.outputs }
}

/** The job summary of a run that stopped on an error (a bad input, an unreachable cluster). */
export function failureMarkdown(phase: string, message: string): string {
  return `## job-sweeper: ${escapeMarkdown(phase)} phase failed\n\n${escapeMarkdown(message)}\n\nNothing was changed after this error.\n`
}
