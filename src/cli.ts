// The job-sweeper CLI, for GitLab, Bitbucket Pipelines, Jenkins or a terminal: the action's
// engine with flags for inputs. Exit codes (src/report/exit-code.ts): 0 done, 1 a Job failed,
// 2 bad usage, 3 the cluster or job-sweeper errored.
import { runCancellation } from './cancel.ts'
import { inCliWords, parseCommandLine, usage, UsageError, VERSION, type Command } from './cli/args.ts'
import { keeperMain } from './cli/keeper.ts'
import { apiErrorMessage } from './kube/errors.ts'
import { RunCancelled } from './kube/retry.ts'
import { whereWords } from './observe/observed.ts'
import { preflightCli } from './preflight/entry.ts'
import { checkLogs, writeReportFile } from './report/file.ts'
import { EXIT, exitCodeOf } from './report/exit-code.ts'
import { changesWords, listOutput, summarize } from './report/summary.ts'
import { renderText } from './report/text.ts'
import type { Console } from './report/console.ts'
import { phaseOnCluster } from './run.ts'
import { redactResult } from './report/redact-result.ts'
import { redact, secretMasker } from './text/secrets.ts'
import { inertLines } from './text/workflow-commands.ts'
import { parseWithChart } from './settings/chart-render.ts'
import { logsWhere, parseSettings, SettingsError, type Settings } from './settings/settings.ts'
import { unusedInputs } from './settings/unused-inputs.ts'

// Outside GitHub Actions no runner masks what is printed: every line goes through the run's masker.
const out = (text: string): boolean => process.stdout.write(redact(text))
const err = (text: string): boolean => process.stderr.write(redact(text))

const stderrConsole: Console = {
  info: (m) => err(`${inertLines(m)}\n`),
  warning: (m) => err(`warning: ${inertLines(m)}\n`),
  group: async (name, fn) => {
    err(`--- ${name}\n`)
    return fn()
  }
}

/**
 * With --json, standard output holds one JSON object whatever happens: a run that fails before it
 * has a result (bad usage, a cluster that does not answer, a Lease never freed) says so in the
 * same shape, `errors` naming why, so that a pipeline reading it (`pre.json`) never reads nothing.
 */
const failureJson = (phase: string, message: string, cancelled: string | false = false): string =>
  `${JSON.stringify({ phase, errors: [message], warnings: [], cancelled }, null, 2)}\n`

async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'keeper') return keeperMain(argv.slice(1))
  // Known before the command line is parsed, for a usage error's JSON.
  const wantsJson = argv.includes('--json')
  let command: Extract<Command, { kind: 'run' }>
  let settings: Settings
  try {
    const parsed = parseCommandLine(argv)
    if (parsed.kind === 'help') {
      process.stdout.write(usage(parsed.phase))
      return 0
    }
    if (parsed.kind === 'version') {
      process.stdout.write(`job-sweeper ${VERSION}\n`)
      return 0
    }
    command = parsed
    // --chart without --manifest: the manifest is the chart rendered as the upgrade will render it.
    settings = await parseWithChart(
      (name) => (name === 'phase' ? parsed.phase : (parsed.inputs[name] ?? '')),
      (read) => parseSettings(read),
      (line) => err(`${line}\n`)
    )
    // Before the cluster is touched: a logs-dir that cannot be written is bad usage.
    await checkLogs(settings, (secret) => secretMasker.add(secret))
  } catch (e) {
    if (e instanceof UsageError || e instanceof SettingsError) {
      const message = inCliWords(e.message)
      process.stderr.write(`job-sweeper: ${message}\nRun 'job-sweeper --help' for usage.\n`)
      if (wantsJson) out(failureJson(argv[0] ?? '', redact(message)))
      return 2
    }
    throw e
  }
  const signal = runCancellation()
  signal.addEventListener('abort', () =>
    err(`job-sweeper: ${(signal.reason as Error).message}: no new delete, wait or TTL patch starts; releasing the Lease\n`)
  )
  // Whether the run's own JSON (or text) went out: a failure after it adds none.
  let printed = false
  const print = (text: string): boolean => ((printed = true), out(text))
  const ignored = unusedInputs(settings, [command.phase], (name) => `--${name}`).map(inCliWords)
  try {
    if (command.phase === 'preflight') {
      for (const w of ignored) stderrConsole.warning(w)
      return await preflightCli(settings, command.json, print, { console: stderrConsole, mask: (secret) => secretMasker.add(secret), signal })
    }
    // Redacted before the report file is written too (standard output and error are redacted anyway).
    const result = redactResult(await phaseOnCluster(command.phase, settings, { console: stderrConsole, mask: (secret) => secretMasker.add(secret), signal }))
    result.warnings.unshift(...ignored)
    const reportFile = await writeReportFile(result, settings.logsDir).catch((e: unknown) => {
      // After the phase did its work: the error says what that was, since the report file will not.
      result.errors.push(redact(`could not write the report in logs-dir '${settings.logsDir}' (${apiErrorMessage(e)}); ${changesWords(result)}`))
      return null
    })
    const summary = summarize(result, settings.logsTarget.kind === 's3' ? { kind: 'bucket', url: settings.logsTarget.url } : { kind: 'dir' })
    if (command.json) {
      // The same lists as the action's outputs (cut to a size a CI variable holds), with counts;
      // the report file has every Job.
      const lists = Object.fromEntries(
        Object.entries(summary.outputs).flatMap(([name, jobs]) => [
          [name, JSON.parse(listOutput(jobs))],
          [`${name}-count`, jobs.length]
        ])
      )
      const json = {
        phase: result.phase,
        namespace: whereWords(result.namespace),
        dryRun: result.dryRun,
        ...lists,
        'logs-dir': logsWhere(settings.logsTarget),
        'report-file': reportFile,
        errors: result.errors,
        warnings: result.warnings,
        cancelled: result.cancelled ?? false,
        'api-requests': result.apiRequests
      }
      print(`${JSON.stringify(json, null, 2)}\n`)
    } else {
      print(renderText(summary))
      out(`\nLogs: ${logsWhere(settings.logsTarget)}\nReport: ${reportFile ?? 'not written'}\n`)
    }
    return exitCodeOf(result)
  } catch (e) {
    // An exec plugin's failure is its standard error, which may quote its args or env. A settings
    // error found as the kubeconfig loads (an unknown context) names the flag, as the others do.
    err(`job-sweeper: ${e instanceof SettingsError ? inCliWords(e.message) : apiErrorMessage(e)}\n`)
    // Failed or cancelled before there was anything to report (the cluster unreachable, waiting for the Lease): --json still says so.
    if (command.json && !printed) {
      const message = redact(e instanceof SettingsError ? inCliWords(e.message) : apiErrorMessage(e))
      out(failureJson(command.phase, message, e instanceof RunCancelled ? message : false))
    }
    // A kubeconfig that does not load, or an unknown context, is found as it is loaded (still
    // before the cluster is read): bad usage too.
    // Anything else (the cluster unreachable, a Lease never freed, cancelled) is no Job's failure.
    return e instanceof SettingsError ? EXIT.usage : EXIT.errored
  }
}

process.exitCode = await main(process.argv.slice(2))
