// A run's result as it may be shown: every secret the run met replaced where job-sweeper wrote the words.
import type { RunResult } from '../execute/outcome.ts'
import { redact } from '../text/secrets.ts'

/**
 * The result with every secret replaced by *** where job-sweeper wrote the words: errors, warnings
 * and reasons (an API or exec plugin error may quote one). Log tails are left to mask-log-tails.
 */
export function redactResult(result: RunResult): RunResult {
  return {
    ...result,
    errors: result.errors.map(redact),
    warnings: result.warnings.map(redact),
    outcomes: result.outcomes.map((o) => ({ ...o, reason: redact(o.reason) })),
    preflight: result.preflight && {
      ...result.preflight,
      rows: result.preflight.rows.map((r) => ({ ...r, reason: redact(r.reason) })),
      remedies: result.preflight.remedies.map(redact)
    }
  }
}
