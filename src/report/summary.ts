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

function headline(result: RunResult, counts: { pruned: number; waited: number; kept: number; ttlSet: number }): string {
  const parts = [`${counts.pruned} ${result.dryRun ? 'would be pruned' : 'pruned'}`, `${counts.waited} waited`, `${counts.kept} kept`]
  if (result.phase === 'post') parts.push(`${counts.ttlSet} ${result.dryRun ? 'TTL would be set' : 'TTL set'}`)
  return `**${parts.join(' · ')}**`
}

export function buildReport(result: RunResult): Report {
  const pruned = result.outcomes.filter((o) => PRUNED.includes(o.result))
  const ttlSet = result.outcomes.filter((o) => TTL_SET.includes(o.result))
  const kept = result.outcomes.filter((o) => !PRUNED.includes(o.result) && !TTL_SET.includes(o.result))
  const waited = result.outcomes.filter((o) => o.waited)
  const outputs = { pruned: pruned.map(toOutput), kept: kept.map(toOutput), waited: waited.map(toOutput), 'ttl-set': ttlSet.map(toOutput) }

  const lines: string[] = [`## job-sweeper: ${result.phase} phase in ${escapeMarkdown(where(result))}`, '']
  if (result.dryRun) lines.push('> **DRY RUN — nothing was changed.**', '')
  if (result.outcomes.length === 0) {
    lines.push('No Jobs in scope: nothing to do.')
  } else {
    lines.push(headline(result, { pruned: pruned.length, waited: waited.length, kept: kept.length, ttlSet: ttlSet.length }), '')
    lines.push('| Job | Namespace | Status | Age | Finished | Action | Reason | TTL / time left |', '| --- | --- | --- | --- | --- | --- | --- | --- |')
    for (const o of result.outcomes) {
      const action = o.waited ? `waited, ${ACTION_WORDS[o.result]}` : ACTION_WORDS[o.result]
      const finished = o.finishedSecondsAgo === undefined ? '—' : `${formatDuration(o.finishedSecondsAgo)} ago`
      const cells = [o.name, o.namespace, o.status, formatDuration(o.ageSeconds), finished, action, o.reason, o.retention ?? '—']
      lines.push(`| ${cells.map(escapeMarkdown).join(' | ')} |`)
    }
  }
  for (const o of result.outcomes) {
    if (o.status !== 'failed' || !o.logs) continue
    for (const tail of o.logs.tails) {
      lines.push(
        '',
        `<details><summary>Last lines of failed Job ${escapeHtml(o.name)}: ${escapeHtml(tail.file)}</summary>`,
        '',
        `<pre>${escapeHtml(tail.lines.join('\n'))}</pre>`,
        '',
        '</details>'
      )
    }
  }
  if (result.errors.length > 0) lines.push('', '### Errors', '', ...result.errors.map((e) => `- ${escapeMarkdown(e)}`))
  if (result.warnings.length > 0) lines.push('', '### Warnings', '', ...result.warnings.map((w) => `- ${escapeMarkdown(w)}`))
  return { markdown: `${lines.join('\n')}\n`, outputs }
}
