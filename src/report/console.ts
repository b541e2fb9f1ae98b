// What a phase takes besides its settings, shared by the orchestrator (run.ts), the preflight and
// the entry points: how it prints, masks and is cancelled. Types only, below all of them.
import type { WorkflowRun } from '../execute/outcome.ts'

/** How a run prints progress: the action uses @actions/core, the CLI standard error. */
export interface Console {
  info(message: string): void
  warning(message: string): void
  /** Runs `fn` with its output grouped under `name` (a log group in GitHub Actions). */
  group<T>(name: string, fn: () => Promise<T>): Promise<T>
}

/** What a phase takes besides its settings: how it prints and masks, the workflow run, its cancellation. */
export interface PhaseOptions {
  console: Console
  /** Called with every secret found in the kubeconfig. */
  mask: (secret: string) => void
  /** The workflow run, for Events and annotations (absent outside GitHub Actions). */
  workflowRun?: WorkflowRun
  /** The run's cancellation (SIGINT, SIGTERM): no new work starts, every wait ends; the Lease is released. */
  signal?: AbortSignal
}
