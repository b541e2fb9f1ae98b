// The executor over the fake client and clock: a store, a plan made from what it lists (as
// observe() would), and execute() run to its end on fake time.
import type { V1Job } from '@kubernetes/client-node'
import { execute } from '../../src/execute/execute.ts'
import type { ExecuteContext, RunResult } from '../../src/execute/outcome.ts'
import type { KeeperPresence } from '../../src/observe/keeper-lease.ts'
import { planPrune, type Plan } from '../../src/plan/plan.ts'
import { planPost, planSweep } from '../../src/plan/retention.ts'
import { parseSettings, type Settings } from '../../src/settings/settings.ts'
import { FakeClock } from './clock.ts'
import { FakeJobsClient } from './jobs-client.ts'

export interface Executor {
  clock: FakeClock
  client: FakeJobsClient
  settings: Settings
  /** What execute() printed. */
  log: string[]
  /** Plans the phase from what the store lists now (the resourceVersion of the list included); `keeper`: the keeper's Lease as pre and sweep read it. */
  plan(keeper?: KeeperPresence): Promise<Plan>
  /** Executes `plan` (default: a fresh one) to its end, moving fake time whenever nothing else can run; `context` adds to the run's (post's keeper). */
  execute(plan?: Plan, signal?: AbortSignal, context?: Pick<ExecuteContext, 'keeper'>): Promise<RunResult>
}

/** Settings from inputs (namespace prod, logs in a fresh temporary directory unless given). */
export function settingsOf(inputs: Record<string, string>): Settings {
  const all: Record<string, string> = { namespace: 'prod', ...inputs }
  return parseSettings((name) => all[name] ?? '', {}, { readText: () => '', exists: () => false })
}

/** A fake cluster holding `jobs`, and the executor over it with `inputs`. */
export function executorOf(inputs: Record<string, string>, jobs: V1Job[] = []): Executor {
  const clock = new FakeClock()
  const client = new FakeJobsClient(clock)
  for (const job of jobs) client.create(job)
  const settings = settingsOf(inputs)
  const log: string[] = []
  const plan = async (keeper?: KeeperPresence): Promise<Plan> => {
    const { jobs, resourceVersion } = await client.listJobs('prod', settings.scope.selector)
    const observed = { namespace: 'prod', jobs, resourceVersions: { prod: resourceVersion }, keeper: settings.phase === 'post' ? undefined : keeper }
    const now = new Date(clock.now())
    return settings.phase === 'post'
      ? planPost(observed, settings, now)
      : settings.phase === 'sweep'
        ? planSweep(observed, settings, now)
        : planPrune(observed, settings, now)
  }
  return {
    clock,
    client,
    settings,
    log,
    plan,
    execute: async (given, signal, context) => {
      const p = given ?? (await plan(context?.keeper))
      return clock.settle(execute(p, client, settings, { info: (m) => log.push(m), clock, signal, ...context }))
    }
  }
}

/** The outcomes as name → [result, reason]. */
export const outcomesOf = (result: RunResult): Record<string, [string, string]> =>
  Object.fromEntries(result.outcomes.map((o) => [o.name, [o.result, o.reason]]))
