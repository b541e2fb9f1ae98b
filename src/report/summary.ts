// Report, pure: a run's outcomes as job-summary Markdown and as the action's outputs.
import type { JobOutcome, OutcomeKind, PruneResult } from '../execute/prune.ts'
import { formatDuration } from '../settings/duration.ts'
import { escapeHtml, escapeMarkdown } from './markdown.ts'

/** One Job in an output: the JSON shape of the pruned, kept and waited outputs. */
export interface OutputJob {
  namespace: string
  name: string
  status: string
  reason: string
}

export interface Report {
  markdown: string
  outputs: { pruned: OutputJob[]; kept: OutputJob[]; waited: OutputJob[] }
}

const PRUNED: OutcomeKind[] = ['pruned', 'would-prune', 'gone']

const ACTION_WORDS: Record<OutcomeKind, string> = {
  kept: 'kept',
  waited: 'waited',
  pruned: 'pruned',
  'would-prune': 'would prune',
  gone: 'already gone',
  replaced: 'kept (replaced)',
  blocked: 'blocked',
  error: 'error'
}

const toOutput = (o: JobOutcome): OutputJob => ({ namespace: o.namespace, name: o.name, status: o.status, reason: o.reason })

export function buildReport(result: PruneResult, phase: string): Report {
  const pruned = result.outcomes.filter((o) => PRUNED.includes(o.result))
  const kept = result.outcomes.filter((o) => !PRUNED.includes(o.result))
  const waited = result.outcomes.filter((o) => o.waited)
  const outputs = { pruned: pruned.map(toOutput), kept: kept.map(toOutput), waited: waited.map(toOutput) }
  const lines: string[] = [`## job-sweeper: ${escapeMarkdown(phase)} phase in namespace ${escapeMarkdown(result.namespace)}`, '']
  if (result.dryRun) lines.push('> **DRY RUN — nothing was changed.**', '')
  if (result.outcomes.length === 0) {
    lines.push('No Jobs in scope: nothing to do.')
  } else {
    lines.push(`**${pruned.length} ${result.dryRun ? 'would be pruned' : 'pruned'} · ${waited.length} waited · ${kept.length} kept**`, '')
    lines.push('| Job | Namespace | Status | Age | Action | Reason |', '| --- | --- | --- | --- | --- | --- |')
    for (const o of result.outcomes) {
      const action = o.waited && o.result === 'pruned' ? 'waited, pruned' : ACTION_WORDS[o.result]
      lines.push(`| ${[o.name, o.namespace, o.status, formatDuration(o.ageSeconds), action, o.reason].map(escapeMarkdown).join(' | ')} |`)
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
