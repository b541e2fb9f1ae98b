// The job-sweeper CLI, for GitLab, Bitbucket Pipelines, Jenkins or a terminal: the action's
// engine with flags for inputs. Exit codes: 0 done, 1 failed, 2 bad usage.
import { runCancellation } from './cancel.ts'
import { parseCommandLine, usage, UsageError, type Command } from './cli/args.ts'
import { keeperMain } from './cli/keeper.ts'
import { apiErrorMessage } from './kube/errors.ts'
import { RunCancelled } from './kube/retry.ts'
import { whereWords } from './observe/observed.ts'
import { preflightCli } from './preflight/entry.ts'
import { checkLogs, writeReportFile } from './report/file.ts'
import { changesWords, listOutput, summarize } from './report/summary.ts'
import { renderText } from './report/text.ts'
import type { Console } from './report/console.ts'
import { phaseOnCluster } from './run.ts'
import { redactResult } from './report/redact-result.ts'
import { redact, secretMasker } from './text/secrets.ts'
import { inertLines } from './text/workflow-commands.ts'
import { logsWhere, parseSettings, SettingsError, type Settings } from './settings/settings.ts'

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

async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'keeper') return keeperMain(argv.slice(1))
  let command: Extract<Command, { kind: 'run' }>
  let settings: Settings
  try {
    const parsed = parseCommandLine(argv)
    if (parsed.kind === 'help') {
      process.stdout.write(usage(parsed.phase))
      return 0
    }
    command = parsed
    settings = parseSettings((name) => (name === 'phase' ? parsed.phase : (parsed.inputs[name] ?? '')))
    // Before the cluster is touched: a logs-dir that cannot be written is bad usage.
    await checkLogs(settings, (secret) => secretMasker.add(secret))
  } catch (e) {
    if (e instanceof UsageError || e instanceof SettingsError) {
      process.stderr.write(`job-sweeper: ${e.message}\nRun 'job-sweeper --help' for usage.\n`)
      return 2
    }
    throw e
  }
  const signal = runCancellation()
  signal.addEventListener('abort', () =>
    err(`job-sweeper: ${(signal.reason as Error).message}: no new delete, wait or TTL patch starts; releasing the Lease\n`)
  )
  try {
    if (command.phase === 'preflight')
      return await preflightCli(settings, command.json, out, { console: stderrConsole, mask: (secret) => secretMasker.add(secret), signal })
    // Redacted before the report file is written too (standard output and error are redacted anyway).
    const result = redactResult(await phaseOnCluster(command.phase, settings, { console: stderrConsole, mask: (secret) => secretMasker.add(secret), signal }))
    const reportFile = await writeReportFile(result, settings.logsDir).catch((e: unknown) => {
      // After the phase did its work: the error says what that was, since the report file will not.
      result.errors.push(redact(`could not write the report in logs-dir '${settings.logsDir}' (${apiErrorMessage(e)}); ${changesWords(result)}`))
      return null
    })
    const summary = summarize(result)
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
      out(`${JSON.stringify(json, null, 2)}\n`)
    } else {
      out(renderText(summary))
      out(`\nLogs: ${logsWhere(settings.logsTarget)}\nReport: ${reportFile ?? 'not written'}\n`)
    }
    return result.errors.length > 0 ? 1 : 0
  } catch (e) {
    // An exec plugin's failure is its standard error, which may quote its args or env.
    err(`job-sweeper: ${apiErrorMessage(e)}\n`)
    // Cancelled before there was anything to report (waiting for the Lease): --json still says so.
    if (e instanceof RunCancelled && command.json) {
      const message = redact(e.message)
      out(`${JSON.stringify({ phase: command.phase, errors: [message], warnings: [], cancelled: message }, null, 2)}\n`)
    }
    // A kubeconfig that does not load, or an unknown context, is found as it is loaded (still
    // before the cluster is read): bad usage too.
    return e instanceof SettingsError ? 2 : 1
  }
}

process.exitCode = await main(process.argv.slice(2))
