// helm sweep (plugin.yaml; docs/helm-plugin.md): one `helm upgrade` that gets past a changed Job.
// It renders the release with the helm that runs it and the very arguments given (`helm upgrade
// --dry-run=server`: lookup, .Release.IsInstall and .Capabilities as the upgrade sees them), runs
// `job-sweeper pre` on that manifest (the preflight gate, then wait, save logs, delete), the real
// `helm upgrade` with the arguments untouched, then `job-sweeper post`; the phases are the CLI
// itself (dist/cli/job-sweeper.mjs), started as a user would. Exit: what failed first.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { UsageError } from './args.ts'
import { parseHelmSweep, type HelmSweepCommand } from './helm-sweep-args.ts'

const USAGE = `Usage: helm sweep upgrade [--install] RELEASE CHART [helm upgrade flags] [--sweep-FLAG ...]

Runs helm upgrade so that a changed Job does not fail it:
  1. render   helm upgrade --dry-run=server with the same arguments (exactly what the upgrade writes)
  2. pre      job-sweeper pre on that manifest: the preflight (when the upgrade would fail for
              another reason, nothing is deleted and helm upgrade is not run), then running Jobs
              waited on, their logs saved, the conflicting Jobs deleted
  3. upgrade  helm upgrade with the arguments as given
  4. post     job-sweeper post: TTLs by outcome, whether the upgrade succeeded or not

Every helm upgrade flag goes to helm untouched; -n/--namespace, --kube-context and --kubeconfig
(or HELM_NAMESPACE, HELM_KUBECONTEXT, KUBECONFIG) also tell job-sweeper where the release is.
job-sweeper's flags take the prefix --sweep-: --sweep-on-running, --sweep-wait-timeout,
--sweep-logs-dir, --sweep-harvest-logs, --sweep-ttl, --sweep-failure-grace, --sweep-wait-for-jobs,
--sweep-preflight, ... (job-sweeper pre --help, job-sweeper post --help).
  --dry-run, --sweep-dry-run  render and show pre's plan and preflight; change nothing
                              (no delete, no helm upgrade, no post)

Exit codes: 0 done; 2 bad usage; otherwise the code of the first step that failed (the render's,
pre's, helm upgrade's, else post's).
`

const say = (line: string): boolean => process.stderr.write(`helm sweep: ${line}\n`)

/** The job-sweeper CLI (dist/cli/job-sweeper.mjs, beside this dist/plugin). */
const CLI = fileURLToPath(new URL('../cli/job-sweeper.mjs', import.meta.url))

/** The child running now, which a SIGINT or SIGTERM sent to helm sweep is passed on to. */
let current: ReturnType<typeof spawn> | undefined
let stopping: NodeJS.Signals | undefined
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    stopping = signal
    current?.kill(signal)
  })

/** Runs a command with this process's environment; its output is this process's, or with `capture`, its standard output is returned. */
function run(command: string, args: string[], capture = false): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['inherit', capture ? 'pipe' : 'inherit', 'inherit'] })
    current = child
    let stdout = ''
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()))
    child.on('error', (e) => {
      say(`could not run ${command}: ${e.message}`)
      resolve({ code: 127, stdout })
    })
    child.on('close', (code, signal) => resolve({ code: code ?? (signal === 'SIGINT' ? 130 : 143), stdout }))
  })
}

// Helm 4 colours NAMESPACE on a terminal, or with --color always.
// eslint-disable-next-line no-control-regex -- an ANSI colour code starts with ESC
const field = (text: string, name: string): string | undefined => new RegExp(`^${name}: (.+)$`, 'm').exec(text.replace(/\x1b\[[0-9;]*m/g, ''))?.[1].trim()

/** Where job-sweeper finds the release: the render's NAMESPACE, the cluster as helm was told. */
function locationArgs(command: HelmSweepCommand, rendered: string): string[] {
  const env = process.env
  const namespace = field(rendered, 'NAMESPACE') ?? command.namespace ?? env.HELM_NAMESPACE
  const context = command.kubeContext ?? (env.HELM_KUBECONTEXT || undefined)
  return [
    ...(namespace ? ['--namespace', namespace] : []),
    ...(context ? ['--context', context] : []),
    // Otherwise job-sweeper reads KUBECONFIG, as helm does (Helm 3 passes its --kubeconfig there).
    ...(command.kubeconfig ? ['--kubeconfig', command.kubeconfig] : [])
  ]
}

async function main(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv
  if (verb === undefined || ['--help', '-h', 'help'].includes(verb) || (verb === 'upgrade' && rest.some((a) => a === '--help' || a === '-h'))) {
    process.stdout.write(USAGE)
    return 0
  }
  let command: HelmSweepCommand
  try {
    if (verb !== 'upgrade') throw new UsageError(`Unknown command '${verb}': expected upgrade`)
    command = parseHelmSweep(rest)
  } catch (e) {
    if (!(e instanceof UsageError)) throw e
    say(`${e.message}\nRun 'helm sweep --help' for usage.`)
    return 2
  }
  const helm = process.env.HELM_BIN || 'helm'
  if (command.rollback)
    say(
      `warning: with ${command.rollback}, a failed upgrade is rolled back to a revision whose Jobs pre deleted, and Helm does not recreate them (docs/rollbacks.md); post gives the Jobs TTLs after the rollback`
    )

  // The rendered release holds the chart's Secrets: a file only this user reads, removed at the end.
  const dir = mkdtempSync(join(tmpdir(), 'helm-sweep-'))
  try {
    say(`render: ${helm} upgrade --dry-run=server (the same arguments)`)
    const render = await run(helm, ['upgrade', ...command.renderArgs, '--dry-run=server', '--output', 'table'], true)
    if (render.code !== 0 || stopping) {
      say(`the render (helm upgrade --dry-run=server) failed with exit code ${render.code}; nothing was changed`)
      return render.code || 1
    }
    const release = field(render.stdout, 'NAME')
    if (release === undefined) {
      say(`the render printed no release status (NAME: ...): expected helm upgrade's table output; nothing was changed`)
      return 1
    }
    const manifest = join(dir, 'rendered.yaml')
    writeFileSync(manifest, render.stdout, { mode: 0o600 })
    const where = locationArgs(command, render.stdout)

    say(`pre: job-sweeper pre --release ${release} --manifest <rendered> ${where.join(' ')}${command.dryRun ? ' --dry-run' : ''}`)
    const pre = await run(process.execPath, [
      CLI,
      'pre',
      '--release',
      release,
      '--manifest',
      manifest,
      ...where,
      ...(command.dryRun ? ['--dry-run'] : []),
      ...command.preArgs
    ])
    if (command.dryRun) {
      say(`dry run: nothing was changed; helm upgrade and post were not run`)
      return pre.code
    }
    if (pre.code !== 0 || stopping) {
      say(`pre failed with exit code ${pre.code}: helm upgrade was not run`)
      return pre.code || 1
    }

    say(`upgrade: ${helm} upgrade (the arguments as given)`)
    const upgrade = await run(helm, ['upgrade', ...command.helmArgs])
    if (stopping) {
      say(`stopped by ${stopping} during helm upgrade (exit code ${upgrade.code}); post was not run`)
      return upgrade.code || 1
    }
    if (upgrade.code !== 0) say(`helm upgrade failed with exit code ${upgrade.code}; post runs all the same`)

    say(`post: job-sweeper post --release ${release} ${where.join(' ')}`)
    const post = await run(process.execPath, [CLI, 'post', '--release', release, ...where, ...command.postArgs])
    if (post.code !== 0) say(`post failed with exit code ${post.code}`)
    return upgrade.code || post.code
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

process.exitCode = await main(process.argv.slice(2))
