// The action's run: settings → observe → plan → execute → report. The only place that turns an
// error into core.setFailed.
import * as core from '@actions/core'
import * as github from '@actions/github'
import { executePrune, type PruneResult } from './execute/prune.ts'
import { KubeJobsClient } from './kube/client.ts'
import { apiErrorMessage } from './kube/errors.ts'
import { loadKubeConfig } from './kube/kubeconfig.ts'
import { observe } from './observe/observe.ts'
import { planPrune } from './plan/plan.ts'
import { writeReport } from './report/write.ts'
import { INPUT, parseSettings, type Settings } from './settings/settings.ts'

/** Keys of the state the main step hands to the post step. */
export const STATE = { isPost: 'isPost' } as const

/** "owner/repo run 42 (https://…/actions/runs/42)" when running in GitHub Actions. */
function runDescription(): string | undefined {
  const { runId, serverUrl } = github.context
  if (!runId || !process.env.GITHUB_REPOSITORY) return undefined
  const { owner, repo } = github.context.repo
  return `workflow run ${serverUrl}/${owner}/${repo}/actions/runs/${runId}`
}

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

/** The pre phase: clear the Jobs that would make helm upgrade fail. */
export async function runPre(settings: Settings): Promise<PruneResult> {
  const kc = loadKubeConfig(settings.kubeconfig, settings.context, mask)
  const client = new KubeJobsClient(kc)
  const observed = await core.group('Observe', async () => {
    const o = await observe(client, settings, (m) => core.warning(m))
    core.info(`${o.jobs.length} Job(s) in namespace ${o.namespace}${settings.scope.selector ? ` matching ${settings.scope.selector}` : ''}`)
    return o
  })
  const plan = planPrune(observed, settings, new Date())
  core.startGroup(`Plan: ${plan.jobs.length} Job(s) in scope`)
  for (const p of plan.jobs) core.info(`${p.action.padEnd(6)} ${p.name} (${p.status}): ${p.reason}`)
  core.endGroup()
  return core.group(settings.dryRun ? 'Execute (dry run: nothing is changed)' : 'Execute', () =>
    executePrune(plan, client, settings, { info: (m) => core.info(m), warning: (m) => core.warning(m), runDescription: runDescription() })
  )
}

export async function run(): Promise<void> {
  if (core.getState(STATE.isPost) === 'true') {
    core.info('job-sweeper post step: the post-deployment phase is not part of this version yet; nothing to do')
    return
  }
  core.saveState(STATE.isPost, 'true')
  try {
    const settings = readSettings()
    const result = await runPre(settings)
    await writeReport(result, 'pre', settings.logsDir)
    for (const w of result.warnings) core.warning(w)
    if (result.errors.length > 0) core.setFailed(result.errors.join('\n'))
  } catch (e) {
    core.setFailed(apiErrorMessage(e))
  }
}
