// The CLI's exit code, from a run's result. Pure. A pipeline tells apart what to fix in the Jobs
// (a migration failed: exit 1, retrying the same revision will not help) from what to retry or
// fix around job-sweeper (the cluster did not answer or refused, a log could not be saved, the
// run was cancelled: exit 3); bad usage is 2 (src/cli.ts, before any result).
import type { RunResult } from '../execute/outcome.ts'

/** Exit codes of the CLI: documented in docs/cli.md and its --help. */
export const EXIT = {
  /** Done: every Job in scope handled as the settings say. */
  done: 0,
  /** A Job failed, never started, or still ran (blocked); or preflight: the upgrade would fail. */
  jobFailed: 1,
  /** Bad usage: an unknown command or flag, an invalid value, a file that cannot be read. */
  usage: 2,
  /** The cluster or job-sweeper errored (unreachable, refused, a log not saved, cancelled): the Jobs' own state is not known to be at fault. */
  errored: 3
} as const

/** 0 without errors; 1 when every error is a Job's own (`jobErrors`); else 3. */
export function exitCodeOf(result: Pick<RunResult, 'errors' | 'jobErrors'>): number {
  if (result.errors.length === 0) return EXIT.done
  const ofJobs = new Set(result.jobErrors ?? [])
  return result.errors.every((e) => ofJobs.has(e)) ? EXIT.jobFailed : EXIT.errored
}
