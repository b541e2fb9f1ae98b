// What the product's fault tests share: Jobs to prune, runs of the bundled action through the
// fault proxy, and the checks every such test makes — each Job in scope pruned exactly once (one
// JobSwept Event each), nothing else touched, and no stack trace, whatever was injected.
import { join } from 'node:path'
import { runAction, type ActionRun } from '../action.ts'
import { createFinishedJobs } from '../bench/finished-jobs.ts'
import { batchApi, coreApi, createJob, eventually, getJob, kubeConfig, testCluster, type PodBehaviour } from '../cluster/testenv.ts'
import { HOLD_LABEL, LINGER_LABEL } from '../cluster/kwok.ts'
import { releaseAnnotations } from '../scenario.ts'
import { runAsync } from './observe.ts'
import type { FaultProxy, RuleHandle } from './proxy.ts'

/** A line of a JavaScript stack trace (`    at fn (file.js:1:2)`): what no run may print. */
export const STACK_FRAME = /^\s+at (?:.+ \()?\S+:\d+:\d+\)?$/m

/** The run printed no stack trace, in its log or its summary. */
export function expectNoStackTrace(run: { stdout: string; stderr: string; summary?: string }): void {
  expect(`${run.stdout}\n${run.stderr}\n${run.summary ?? ''}`).not.toMatch(STACK_FRAME)
}

/** Runs the bundled action (one step) with its API requests going through `proxy`. */
export function runThrough(proxy: FaultProxy, inputs: Record<string, string>): Promise<ActionRun> {
  return runAction(inputs, { env: proxy.env() })
}

/** Creates `n` finished Jobs of the release (`<prefix>-<i>`) in `namespace`; returns their names. */
export async function releaseJobs(namespace: string, prefix: string, n: number, behaviour: Exclude<PodBehaviour, 'hold'> = 'succeed'): Promise<string[]> {
  const made = await createFinishedJobs(kubeConfig(), namespace, n, { prefix, behaviour, annotations: releaseAnnotations(namespace), timeoutMs: 120_000 })
  return made.names
}

/**
 * A Job of the release whose pod is held Running until release() lets it succeed; with `linger`,
 * once deleted the pod stays Terminating (and a foreground-deleted Job with it) until letGo().
 */
export async function heldReleaseJob(namespace: string, name: string, linger = false): Promise<{ release: () => Promise<void>; letGo: () => Promise<void> }> {
  await createJob({ namespace, name, behaviour: 'hold', linger, annotations: releaseAnnotations(namespace) })
  await eventually(
    `${name} running`,
    () => getJob(namespace, name),
    (j) => j?.status?.active === 1
  )
  const unlabel = async (label: string): Promise<void> => {
    // kubectl straight to the API server, asynchronously: the proxy serves from this process.
    const done = await runAsync(join(testCluster().binDir, 'kubectl'), ['label', 'pod', '-n', namespace, '-l', `job-name=${name}`, `${label}-`], {
      KUBECONFIG: testCluster().kubeconfig
    })
    if (done.code !== 0) throw new Error(`could not remove ${label} from the pods of ${name}: ${done.stderr}`)
  }
  return { release: () => unlabel(HOLD_LABEL), letGo: () => unlabel(LINGER_LABEL) }
}

/** Names of the Jobs in `namespace` (sorted). */
export async function jobNames(namespace: string): Promise<string[]> {
  return (await batchApi().listNamespacedJob({ namespace })).items.map((j) => j.metadata?.name ?? '').sort()
}

/** The Jobs that have a JobSwept Event, one entry per Event (sorted): a Job twice was recorded twice. */
export async function sweptEvents(namespace: string): Promise<string[]> {
  const events = await coreApi().listNamespacedEvent({ namespace, fieldSelector: 'reason=JobSwept' })
  return events.items.map((e) => e.involvedObject.name ?? '').sort()
}

/** Every name in `names` is gone from `namespace`, and has exactly one JobSwept Event. */
export async function expectPrunedOnce(namespace: string, names: string[]): Promise<void> {
  const left = new Set(await jobNames(namespace))
  expect(names.filter((n) => left.has(n))).toEqual([])
  expect(await sweptEvents(namespace)).toEqual([...names].sort())
}

/** How often each rule fired (the faults a run met), for the test's own assertions and the tally. */
export const fired = (...rules: RuleHandle[]): number => rules.reduce((sum, r) => sum + r.fired, 0)

/** Faults injected and survived across a test file, printed once at its end (README figures). */
export class FaultTally {
  private faults = 0
  private decoys = 0
  add(rules: RuleHandle[], decoysKept = 0): void {
    this.faults += fired(...rules)
    this.decoys += decoysKept
  }
  print(file: string): void {
    console.log(`${file}: ${this.faults} faults injected and survived, ${this.decoys} decoys kept`)
  }
}
