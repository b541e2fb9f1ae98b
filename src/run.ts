// One phase, start to end: check the namespaces, take the scope's Lease, (pre with a manifest: the
// preflight gate, src/preflight/gate.ts) observe → plan → execute, release the Lease; against the
// cluster the settings name.
// Shared by the action (main.ts) and the CLI (cli.ts); each passes its own way of printing.
import { execute } from './execute/execute.ts'
import type { ExecuteContext, RunResult } from './execute/outcome.ts'
import { KubeJobsClient, type JobsClient } from './kube/client.ts'
import { realClock } from './kube/clock.ts'
import { cancelledBy } from './kube/retry.ts'
import { loadKubeConfig } from './kube/kubeconfig.ts'
import { takeLeases, runLeaseName, runIdentity, scopeKey } from './kube/lease.ts'
import type { ManifestClient } from './kube/manifest-client.ts'
import { observe, observeFailures, observeStarts, observeSweep, sweepManifest, targetNamespace } from './observe/observe.ts'
import { whereWords, type Observed } from './observe/observed.ts'
import { readKeeperLease, type KeeperWatch } from './observe/keeper-lease.ts'
import { isHeld, keeperLine } from './plan/keeper.ts'
import { leaseLiveness } from './plan/lease-liveness.ts'
import { checkNamespaces, missingReleaseWarning } from './observe/preconditions.ts'
import { decidable, planPrune, type Plan, type PlannedJob } from './plan/plan.ts'
import { planPolicy } from './plan/policy.ts'
import { jobStatus } from './plan/predicates.ts'
import { planPost, sweepPlanner } from './plan/retention.ts'
import { preflightGate, type GateDecision } from './preflight/gate.ts'
import { recreateStatefulSets } from './preflight/remedy.ts'
import { objectName } from './preflight/report.ts'
import type { Console, PhaseOptions } from './report/console.ts'
import { gitOpsWarnings } from './report/gitops.ts'
import { INPUT, type Phase, type Settings } from './settings/settings.ts'
import { NAMES_SHOWN, someNames } from './text/shorten.ts'

async function observed(out: Console, what: string, look: () => Promise<Observed>): Promise<Observed> {
  return out.group('Observe', async () => {
    const o = await look()
    out.info(`${o.listed ?? o.jobs.length} Job(s) ${what} in ${whereWords(o.namespace)}`)
    return o
  })
}

/**
 * Pre and post: the Jobs in scope that look running are looked at through their pods, so that one
 * that never started counts as stuck. A sweep reads no pods (docs/reliability.md).
 */
async function withStarts(client: JobsClient, settings: Settings, o: Observed, warn: (message: string) => void): Promise<Observed> {
  const unfinished = decidable(o, settings).filter((job) => jobStatus(job) === 'running')
  await observeStarts(client, unfinished, settings.stuckAfterSeconds, warn)
  return o
}

/** Post: why each failed Job in scope failed, for its row and its error line. */
async function withFailures(client: JobsClient, settings: Settings, o: Observed): Promise<Observed> {
  await observeFailures(
    client,
    decidable(o, settings).filter((job) => jobStatus(job) === 'failed')
  )
  return o
}

// The plan's log lists each Job up to this many; beyond, it counts them by action.
const PLAN_LINES = 50

function showPlan(out: Console, jobs: PlannedJob[]): Promise<void> {
  return out.group(`Plan: ${jobs.length} Job(s) in scope`, async () => {
    for (const p of jobs.slice(0, PLAN_LINES)) out.info(`${p.action.padEnd(7)} ${p.namespace}/${p.name} (${p.status}): ${p.reason}`)
    // Counted by action with the first few names: one pass, whatever the number of Jobs.
    const byAction = new Map<string, { count: number; names: string[] }>()
    for (let i = PLAN_LINES; i < jobs.length; i++) {
      const { action, name } = jobs[i]
      let entry = byAction.get(action)
      if (!entry) byAction.set(action, (entry = { count: 0, names: [] }))
      entry.count++
      if (entry.names.length <= NAMES_SHOWN) entry.names.push(name)
    }
    for (const [action, { count, names }] of byAction) out.info(`${action.padEnd(7)} ${count} more: ${someNames(names)}`)
  })
}

/** The namespaces a phase works in: one for pre and post, the list (or none: all) for a sweep. */
function namespacesOf(phase: Phase, settings: Settings, client: JobsClient): string[] {
  if (phase !== 'sweep') return [targetNamespace(settings, client)]
  return settings.allNamespaces ? [] : (settings.namespaces ?? [client.defaultNamespace])
}

/** One phase against the cluster the settings name: the client is made here, and closed at the end. */
export async function phaseOnCluster(phase: Phase, settings: Settings, options: PhaseOptions): Promise<RunResult> {
  const startedAt = new Date().toISOString()
  const kc = loadKubeConfig(settings.kubeconfig, settings.context, options.mask)
  const kube = new KubeJobsClient(kc, { signal: options.signal, onCredential: options.mask })
  try {
    const result = await phaseUnderLease(kube, phase, settings, options, kube.manifestClient())
    return { ...result, apiRequests: kube.requests, startedAt, scope: scopeWords(settings.scope), context: kc.getCurrentContext() || undefined }
  } finally {
    await kube.close()
  }
}

/** The scope in words for the summary's title: `release shop`, `selector app=web`, `jobs a, b`. */
export function scopeWords(scope: Settings['scope']): string {
  return [
    scope.release !== undefined && `release ${scope.release}`,
    scope.manifest !== undefined && `manifest ${scope.manifest}`,
    scope.selector !== undefined && `selector ${scope.selector}`,
    scope.jobs !== undefined && `jobs ${someNames(scope.jobs)}`
  ]
    .filter((w): w is string => typeof w === 'string')
    .join(', ')
}

/** Checks the namespaces, takes the scope's Lease, observes, plans and executes, and releases the Lease. */
async function phaseUnderLease(client: JobsClient, phase: Phase, settings: Settings, options: PhaseOptions, manifests: ManifestClient): Promise<RunResult> {
  const out = options.console
  const namespaces = namespacesOf(phase, settings, client)
  await checkNamespaces(client, namespaces, settings.namespaces === undefined)
  // A dry run changes nothing, the Lease included; a sweep of all namespaces takes none
  // (docs/concurrency.md), its deletes being safe against any other run through their preconditions.
  const manifestNames = settings.manifestJobs?.map((j) => j.metadata?.name ?? '')
  const leases =
    settings.dryRun || namespaces.length === 0
      ? undefined
      : await takeLeases(namespaces, {
          client,
          name: runLeaseName(settings, manifestNames),
          scope: scopeKey(settings.scope, manifestNames),
          holder: runIdentity(process.env, options.workflowRun?.url),
          waitSeconds: settings.waitTimeoutSeconds,
          info: (m) => out.info(m),
          signal: options.signal
        })
  let result: RunResult
  try {
    // Observed only once the Lease is held: a run that waited plans on what the other one left.
    // Pre with a manifest checks the whole rendered release first: before any delete or wait.
    stopIfCancelled(options.signal)
    const gate = phase === 'pre' && settings.manifestObjects ? await preflightGate(manifests, settings, out) : undefined
    // A check cut short by the cancellation is no verdict, and nothing is observed after it.
    stopIfCancelled(options.signal)
    if (gate && gate.errors.length > 0) result = stoppedByPreflight(settings, namespaces, gate)
    else {
      result = await observePlanExecute(phase, settings, client, namespaces, options)
      if (gate) await afterPre(result, gate, manifests, settings, options)
    }
  } finally {
    await leases?.release()
  }
  result.warnings.push(...(leases?.warnings ?? []))
  return result
}

/**
 * Stops the phase between its steps once the run is cancelled (SIGINT, SIGTERM): what is in
 * flight ends on the signal, and this keeps the next step (the preflight, observing, executing)
 * from starting new requests. The caller releases the Lease and reports the cancellation.
 */
function stopIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw cancelledBy(signal)
}

/** Pre stopped by its preflight: no Job was observed, waited on or deleted. */
function stoppedByPreflight(settings: Settings, namespaces: string[], gate: GateDecision): RunResult {
  return {
    phase: 'pre',
    namespace: namespaces[0],
    dryRun: settings.dryRun,
    outcomes: [],
    errors: gate.errors,
    // The upgrade would fail on the release's own objects: the CLI's exit 1, as preflight's.
    jobErrors: gate.errors,
    warnings: gate.warnings,
    preflight: gate.section,
    endedAt: new Date().toISOString()
  }
}

/** Pre's preflight in its result, and the chosen remedies once the Jobs are done: only when pre did its work. */
async function afterPre(result: RunResult, gate: GateDecision, manifests: ManifestClient, settings: Settings, options: PhaseOptions): Promise<void> {
  result.preflight = gate.section
  result.warnings.unshift(...gate.warnings)
  if (gate.recreate.length === 0) return
  if (result.errors.length > 0 || result.cancelled !== undefined) {
    const names = gate.recreate.map(objectName).join(', ')
    result.errors.push(`${INPUT.recreateStatefulSets}: ${names} not deleted, since pre did not complete; helm upgrade would fail on it`)
    return
  }
  const out = options.console
  const remedied = await out.group('Remedy: recreate-statefulsets', () =>
    recreateStatefulSets(manifests, gate.recreate, settings, { info: (m) => out.info(m), signal: options.signal })
  )
  for (const line of remedied.done) out.info(line)
  gate.section.remedies.push(...remedied.done, ...remedied.errors)
  result.errors.push(...remedied.errors)
}

async function observePlanExecute(phase: Phase, settings: Settings, client: JobsClient, namespaces: string[], options: PhaseOptions): Promise<RunResult> {
  const out = options.console
  const ctx: ExecuteContext = { info: (m) => out.info(m), workflowRun: options.workflowRun, signal: options.signal }
  const warn = (m: string): void => out.warning(m)
  const what = settings.scope.selector ? `matching ${settings.scope.selector}` : 'listed'
  const now = new Date()
  // The planner sees the decisions' settings only, not where the cluster is or where logs go.
  const policy = planPolicy(settings, process.env)
  // Whether a keeper runs is watched on this run's clock (up to 30 s: observe/keeper-lease.ts).
  const keeperWatch = (signal?: AbortSignal): KeeperWatch => ({ clock: realClock, decide: leaseLiveness, info: (m) => out.info(m), signal })
  // pre and sweep: the keeper's Lease, to tell the holds no keeper runs to let go of; pre watches
  // it while it observes the Jobs, and stops when none is held (then the answer matters to none).
  const unneeded = new AbortController()
  const watching =
    phase !== 'post' && settings.keeperNamespace !== undefined
      ? readKeeperLease(
          client,
          settings.keeperNamespace,
          warn,
          false,
          keeperWatch(options.signal ? AbortSignal.any([options.signal, unneeded.signal]) : unneeded.signal)
        )
      : undefined
  watching?.catch(() => undefined) // awaited below: an observation that fails first must not leave it unhandled
  let plan: Plan
  try {
    switch (phase) {
      case 'pre': {
        const seen = await observed(out, what, async () => withStarts(client, settings, await observe(client, settings, warn, true, (m) => out.info(m)), warn))
        if (!seen.jobs.some(isHeld)) unneeded.abort()
        plan = planPrune({ ...seen, keeper: await watching }, policy, now)
        break
      }
      case 'post':
        plan = planPost(
          await observed(out, what, async () =>
            withFailures(client, settings, await withStarts(client, settings, await observe(client, settings, warn, false), warn))
          ),
          policy,
          now
        )
        if (settings.keeperNamespace !== undefined && !settings.dryRun) {
          ctx.keeper = await readKeeperLease(client, settings.keeperNamespace, warn, true, keeperWatch(options.signal))
          if (!ctx.keeper.unread) out.info(keeperLine(ctx.keeper.namespace, ctx.keeper.lease))
        }
        break
      case 'sweep': {
        // Planned page by page as the list arrives: a sweep of tens of thousands of Jobs holds the
        // decisions, not the list (see sweepPlanner); the keeper's answer is needed before the first page.
        const planner = sweepPlanner({ namespace: '', jobs: [], manifest: sweepManifest(settings), keeper: await watching }, policy, now)
        plan = planner.plan(await observed(out, what, () => observeSweep(client, settings, (page) => planner.add(page))))
        break
      }
      case 'preflight':
        // Plans nothing: it runs through src/preflight/phase.ts, from main.ts and cli.ts.
        throw new Error('preflight is not a Job phase')
    }
  } finally {
    unneeded.abort() // a watch no longer awaited ends
  }
  // Cancelled while it observed: no watch, list or delete starts after (the Lease is released by the caller).
  stopIfCancelled(options.signal)
  const release = settings.scope.release
  const noRelease =
    plan.jobs.length === 0 && release !== undefined && namespaces.length > 0 ? await missingReleaseWarning(client, release, namespaces) : undefined
  await showPlan(out, plan.jobs)
  const result = await out.group(settings.dryRun ? 'Execute (dry run: nothing is changed)' : 'Execute', () => execute(plan, client, settings, ctx))
  result.warnings.push(...gitOpsWarnings(plan, result.outcomes))
  if (noRelease !== undefined) result.warnings.unshift(noRelease)
  return { ...result, endedAt: new Date().toISOString() }
}
