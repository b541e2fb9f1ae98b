// The action's run: settings → observe → plan → execute → report, for the phase at hand. The
// only place that turns an error into core.setFailed.
import * as core from '@actions/core'
import * as github from '@actions/github'
import type { ExecuteContext, RunResult } from './execute/outcome.ts'
import { executePrune } from './execute/prune.ts'
import { executeRetention } from './execute/retention.ts'
import { KubeJobsClient, type JobsClient } from './kube/client.ts'
import { apiErrorMessage } from './kube/errors.ts'
import { loadKubeConfig } from './kube/kubeconfig.ts'
import { observe, observeSweep } from './observe/observe.ts'
import { planPrune, type Observed, type PlannedJob } from './plan/plan.ts'
import { planPost, planSweep } from './plan/retention.ts'
import { writeReport } from './report/write.ts'
import { INPUT, parseSettings, type Phase, type Settings } from './settings/settings.ts'

/** Keys of the state the main step hands to the post step (core.saveState / getState). */
export const STATE = {
  /** Set by the main step: the next run of this action in the job is its post step. */
  isPost: 'isPost',
  /** `completed` once the main step's pre phase succeeded: only then does the post step run. */
  prePhase: 'pre-phase'
} as const

/**
 * Registers a secret with the runner. Outside GitHub Actions nothing consumes `::add-mask::`, so
 * printing it there would show the secret itself: then it is only never printed.
 */
function mask(secret: string): void {
  if (process.env.GITHUB_ACTIONS === 'true') core.setSecret(secret)
}

function readSettings(): Settings {
  // The input as a whole (base64 or not) is a secret; the tokens and keys inside it are masked
  // one by one once it is parsed (loadKubeConfig).
  const raw = core.getInput(INPUT.kubeconfig).trim()
  if (raw !== '') mask(raw)
  return parseSettings((name) => core.getInput(name))
}

/** The workflow run, when running in GitHub Actions: for Events and annotations. */
function workflowRun(): ExecuteContext['run'] {
  const { runId, serverUrl, sha } = github.context
  if (!runId || !process.env.GITHUB_REPOSITORY) return undefined
  const { owner, repo } = github.context.repo
  return { url: `${serverUrl}/${owner}/${repo}/actions/runs/${runId}`, commit: sha || undefined }
}

async function observed(what: string, look: () => Promise<Observed>): Promise<Observed> {
  return core.group('Observe', async () => {
    const o = await look()
    core.info(`${o.jobs.length} Job(s) ${what} in ${o.namespace}`)
    return o
  })
}

function showPlan(jobs: PlannedJob[]): void {
  core.startGroup(`Plan: ${jobs.length} Job(s) in scope`)
  for (const p of jobs) core.info(`${p.action.padEnd(7)} ${p.namespace}/${p.name} (${p.status}): ${p.reason}`)
  core.endGroup()
}

/** Runs one phase against the cluster the settings name. */
export async function runPhase(phase: Phase, settings: Settings): Promise<RunResult> {
  const client: JobsClient = new KubeJobsClient(loadKubeConfig(settings.kubeconfig, settings.context, mask))
  const ctx: ExecuteContext = { phase, info: (m) => core.info(m), warning: (m) => core.warning(m), run: workflowRun() }
  const warn = (m: string): void => core.warning(m)
  const executeGroup = settings.dryRun ? 'Execute (dry run: nothing is changed)' : 'Execute'
  const selector = settings.scope.selector ? `matching ${settings.scope.selector}` : 'listed'
  const now = new Date()
  switch (phase) {
    case 'pre': {
      const plan = planPrune(await observed(selector, () => observe(client, settings, warn, true)), settings, now)
      showPlan(plan.jobs)
      return core.group(executeGroup, () => executePrune(plan, client, settings, ctx))
    }
    case 'post': {
      const plan = planPost(await observed(selector, () => observe(client, settings, warn, false)), settings, now)
      showPlan(plan.jobs)
      return core.group(executeGroup, () => executeRetention(plan, client, settings, ctx))
    }
    case 'sweep': {
      const plan = planSweep(await observed(selector, () => observeSweep(client, settings)), settings, now)
      showPlan(plan.jobs)
      return core.group(executeGroup, () => executePrune(plan, client, settings, ctx))
    }
  }
}

/** Entry of both the main and the post step (action.yml runs dist/index.js for each). */
export async function run(): Promise<void> {
  const isPost = core.getState(STATE.isPost) === 'true'
  if (!isPost) core.saveState(STATE.isPost, 'true')
  try {
    if (isPost && core.getState(STATE.prePhase) !== 'completed') {
      core.info('job-sweeper post step: the main step did not complete a pre phase, so there is nothing to do')
      return
    }
    const settings = readSettings()
    const phase: Phase = isPost ? 'post' : settings.phase
    const result = await runPhase(phase, settings)
    await writeReport(result, settings.logsDir)
    for (const w of result.warnings) core.warning(w)
    if (result.errors.length > 0) core.setFailed(result.errors.join('\n'))
    else if (!isPost && phase === 'pre') core.saveState(STATE.prePhase, 'completed')
  } catch (e) {
    core.setFailed(apiErrorMessage(e))
  }
}
