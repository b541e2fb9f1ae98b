// One phase, start to end: observe → plan → execute, against the cluster the settings name.
// Shared by the action (main.ts) and the CLI (cli.ts); each passes its own way of printing.
import { execute } from './execute/execute.ts'
import type { ExecuteContext, RunResult } from './execute/outcome.ts'
import { someNames } from './execute/progress.ts'
import { KubeJobsClient, type JobsClient } from './kube/client.ts'
import { loadKubeConfig } from './kube/kubeconfig.ts'
import { observe, observeSweep } from './observe/observe.ts'
import { planPrune, type Observed, type Plan, type PlannedJob } from './plan/plan.ts'
import { planPost, planSweep } from './plan/retention.ts'
import type { Phase, Settings } from './settings/settings.ts'

/** How a run prints progress: the action uses @actions/core, the CLI standard error. */
export interface Console {
  info(message: string): void
  warning(message: string): void
  /** Runs `fn` with its output grouped under `name` (a log group in GitHub Actions). */
  group<T>(name: string, fn: () => Promise<T>): Promise<T>
}

export interface RunOptions {
  console: Console
  /** Called with every secret found in the kubeconfig. */
  mask: (secret: string) => void
  /** The workflow run, for Events and annotations (absent outside GitHub Actions). */
  run?: ExecuteContext['run']
}

async function observed(out: Console, what: string, look: () => Promise<Observed>): Promise<Observed> {
  return out.group('Observe', async () => {
    const o = await look()
    out.info(`${o.jobs.length} Job(s) ${what} in ${o.namespace}`)
    return o
  })
}

// The plan's log lists each Job up to this many; beyond, it counts them by action.
const PLAN_LINES = 50

function showPlan(out: Console, jobs: PlannedJob[]): Promise<void> {
  return out.group(`Plan: ${jobs.length} Job(s) in scope`, async () => {
    for (const p of jobs.slice(0, PLAN_LINES)) out.info(`${p.action.padEnd(7)} ${p.namespace}/${p.name} (${p.status}): ${p.reason}`)
    if (jobs.length > PLAN_LINES) {
      const byAction = new Map<string, string[]>()
      for (const p of jobs.slice(PLAN_LINES)) byAction.set(p.action, [...(byAction.get(p.action) ?? []), p.name])
      for (const [action, names] of byAction) out.info(`${action.padEnd(7)} ${names.length} more: ${someNames(names)}`)
    }
  })
}

export async function runPhase(phase: Phase, settings: Settings, options: RunOptions): Promise<RunResult> {
  const out = options.console
  const client: JobsClient = new KubeJobsClient(loadKubeConfig(settings.kubeconfig, settings.context, options.mask))
  const ctx: ExecuteContext = { info: (m) => out.info(m), run: options.run }
  const warn = (m: string): void => out.warning(m)
  const what = settings.scope.selector ? `matching ${settings.scope.selector}` : 'listed'
  const now = new Date()
  let plan: Plan
  switch (phase) {
    case 'pre':
      plan = planPrune(await observed(out, what, () => observe(client, settings, warn, true)), settings, now)
      break
    case 'post':
      plan = planPost(await observed(out, what, () => observe(client, settings, warn, false)), settings, now)
      break
    case 'sweep':
      plan = planSweep(await observed(out, what, () => observeSweep(client, settings)), settings, now)
      break
  }
  await showPlan(out, plan.jobs)
  const result = await out.group(settings.dryRun ? 'Execute (dry run: nothing is changed)' : 'Execute', () => execute(plan, client, settings, ctx))
  return { ...result, endedAt: new Date().toISOString() }
}
