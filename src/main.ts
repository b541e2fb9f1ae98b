// The action's step (main or post): settings → observe → plan → execute → report, for the phase
// at hand. The only place that turns an error into core.setFailed.
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import * as core from '@actions/core'
import * as github from '@actions/github'
import { runCancellation } from './cancel.ts'
import type { WorkflowRun } from './execute/outcome.ts'
import { apiErrorMessage } from './kube/errors.ts'
import { RunCancelled } from './kube/retry.ts'
import { preflightAction } from './preflight/action.ts'
import { actionsArtifactUploader, uploadSavedLogs } from './report/artifact.ts'
import { checkLogs } from './report/file.ts'
import { changesWords } from './report/summary.ts'
import { writeFailure, writeNoOutcomes, writeReport } from './report/write.ts'
import type { Console } from './report/console.ts'
import { phaseOnCluster } from './run.ts'
import { redactResult } from './report/redact-result.ts'
import { redact, secretMasker } from './text/secrets.ts'
import { inertLines } from './text/workflow-commands.ts'
import { parseWithChart } from './settings/chart-render.ts'
import { isKubeconfigPath } from './settings/kubeconfig-input.ts'
import { INPUT, logsWhere, parseSettings, type Phase, type Settings } from './settings/settings.ts'
import { unusedInputs } from './settings/unused-inputs.ts'

/** Keys of the state the main step hands to the post step (core.saveState / getState). */
export const STATE = {
  /** Set by the main step: the next run of this action in the job is its post step. */
  isPost: 'isPost',
  /** `completed` once the main step's pre phase succeeded: only then does the post step run. */
  prePhase: 'pre-phase'
} as const

/**
 * The variable a post phase exports to the job's later steps (GITHUB_ENV) for its scope: a
 * two-step setup runs `phase: post` as a step of its own, and the pre step's post step, which the
 * runner runs at the job's end with the pre step's inputs, then leaves the post phase to it rather
 * than run it a second time over it (its TTLs, its wait, its summary).
 */
export function postRanVariable(settings: Pick<Settings, 'namespace' | 'context' | 'scope'>): string {
  const { release, manifest, selector, jobs } = settings.scope
  const key = JSON.stringify([settings.context ?? '', settings.namespace ?? '', release ?? '', manifest ?? '', selector ?? '', [...(jobs ?? [])].sort()])
  return `JOB_SWEEPER_POST_RAN_${createHash('sha256').update(key).digest('hex').slice(0, 16).toUpperCase()}`
}

/**
 * Registers a secret with the runner, and with the run's own masker (for what the runner does
 * not see, like log tails). Outside GitHub Actions nothing consumes `::add-mask::`, so printing it
 * there would show the secret itself: then it is only redacted.
 */
function mask(secret: string): void {
  // Once each: a token is met again at every request that carries it.
  if (secretMasker.add(secret) && process.env.GITHUB_ACTIONS === 'true') core.setSecret(secret)
}

async function readSettings(): Promise<Settings> {
  // Kubeconfig content as the input (base64 or not) is a secret as a whole; the tokens and keys
  // inside it are masked one by one once it is loaded (loadKubeConfig). A path is no secret, and
  // masking it would hide every mention of, say, "kubeconfig".
  const raw = core.getInput(INPUT.kubeconfig).trim()
  if (raw !== '' && !isKubeconfigPath(raw, existsSync)) mask(raw)
  // chart without manifest: manifest is the chart rendered as the upgrade will render it.
  return parseWithChart(
    (name) => core.getInput(name),
    (read) => parseSettings(read),
    (line) => core.info(line)
  )
}

// What the run prints quotes the cluster (pod and Event messages): no line of it may read as a workflow command.
const actionsConsole: Console = {
  info: (m) => core.info(inertLines(redact(m))),
  warning: (m) => core.warning(redact(m)),
  group: (name, fn) => core.group(name, fn)
}

/** The workflow run, when running in GitHub Actions: for Events and annotations. */
function workflowRun(): WorkflowRun | undefined {
  const { runId, serverUrl, sha } = github.context
  if (!runId || !process.env.GITHUB_REPOSITORY) return undefined
  const { owner, repo } = github.context.repo
  return { url: `${serverUrl}/${owner}/${repo}/actions/runs/${runId}`, commit: sha || undefined }
}

/** Entry of both the main and the post step (action.yml runs dist/index.js for each). */
export async function actionStep(): Promise<void> {
  const isPost = core.getState(STATE.isPost) === 'true'
  if (!isPost) core.saveState(STATE.isPost, 'true')
  // For the summary of a run that fails before its settings are parsed.
  let phaseName = isPost ? 'post' : core.getInput(INPUT.phase) || 'pre'
  const signal = runCancellation()
  signal.addEventListener('abort', () =>
    core.warning(`${(signal.reason as Error).message}: no new delete, wait or TTL patch starts; releasing the Lease and writing the summary`)
  )
  try {
    if (isPost && core.getState(STATE.prePhase) !== 'completed') {
      core.info('job-sweeper post step: the main step did not complete a pre phase, so there is nothing to do')
      return
    }
    const settings = await readSettings()
    const phase: Phase = isPost ? 'post' : settings.phase
    phaseName = phase
    const postRan = postRanVariable(settings)
    if (isPost && process.env[postRan]) {
      core.info(
        `job-sweeper post step: a phase: post step of this job ran the post phase for the same scope already (${process.env[postRan]}), so there is nothing to do`
      )
      return
    }
    await checkLogs(settings, mask)
    // The main step's pre gives its inputs to its post step too; that post step said it all already.
    const ignored = isPost ? [] : unusedInputs(settings, phase === 'pre' ? ['pre', 'post'] : [phase])
    if (phase === 'preflight') {
      for (const w of ignored) core.warning(w)
      return await preflightAction(settings, { console: actionsConsole, mask, signal })
    }
    // Outside GitHub Actions no runner masks the log: what job-sweeper writes is redacted itself.
    const run = workflowRun()
    const result = redactResult(await phaseOnCluster(phase, settings, { console: actionsConsole, mask, workflowRun: run, signal }))
    result.warnings.unshift(...ignored)
    const succeeded = result.errors.length === 0
    for (const w of result.warnings) core.warning(w)
    try {
      const upload = settings.uploadLogs
        ? async (reportFile: string | undefined) =>
            await uploadSavedLogs(result.stored ?? [], settings.logsDir, reportFile, phase, await actionsArtifactUploader(), run?.url)
        : undefined
      await writeReport(result, settings.logsDir, logsWhere(settings.logsTarget), upload)
    } catch (e) {
      // After the phase did its work: the error says what that was, since no report will.
      result.errors.push(redact(`could not write the report in ${INPUT.logsDir} '${settings.logsDir}' (${apiErrorMessage(e)}); ${changesWords(result)}`))
    }
    // The post step gives the upgrade's Jobs their TTLs after a pre phase that did its work, even
    // when its report could not be written.
    if (succeeded && !isPost && phase === 'pre') core.saveState(STATE.prePhase, 'completed')
    // Ran, whatever its outcome: the pre step's post step (at the job's end) does not run it again.
    if (phase === 'post' && !isPost && process.env.GITHUB_ENV) core.exportVariable(postRan, process.env.GITHUB_ACTION || 'a phase: post step')
    if (result.errors.length > 0) core.setFailed(result.errors.join('\n'))
  } catch (e) {
    // An exec plugin's failure is its standard error, which may quote its args or env.
    const message = redact(apiErrorMessage(e))
    core.setFailed(message)
    if (e instanceof RunCancelled) writeNoOutcomes(phaseName as Phase)
    await writeFailure(phaseName, message).catch((w: unknown) => core.warning(`could not write the job summary: ${apiErrorMessage(w)}`))
  }
}
