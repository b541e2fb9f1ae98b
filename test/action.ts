// Runs the bundled action (node dist/index.js) the way the GitHub runner does: inputs as INPUT_*
// variables (every input action.yml declares, with its default where none is given), and
// GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_STATE and GITHUB_ENV files; the post step gets the main
// step's saved state as STATE_* variables, and a later step what an earlier one exported (env). test/act.test.ts checks this reading against nektos/act.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { load } from 'js-yaml'
import { testCluster } from './cluster/testenv.ts'

const bundle = join(import.meta.dirname, '..', 'dist', 'index.js')

/**
 * Every input action.yml declares, with its default ('' when it has none). A runner passes them
 * all, not only those the step's `with:` gives (act does, as GitHub's runner: INPUT_WAIT-TIMEOUT=10m
 * for a step that never named wait-timeout).
 */
function declaredInputs(): Record<string, string> {
  const action = load(readFileSync(join(import.meta.dirname, '..', 'action.yml'), 'utf8')) as { inputs: Record<string, { default?: unknown }> }
  return Object.fromEntries(Object.entries(action.inputs).map(([name, input]) => [name, input.default === undefined ? '' : String(input.default)]))
}

export interface ActionRun {
  code: number
  stdout: string
  stderr: string
  outputs: Record<string, string>
  summary: string
  /** What the step saved with core.saveState. */
  state: Record<string, string>
  /** What the step exported to the job's later steps (core.exportVariable: GITHUB_ENV). */
  exported: Record<string, string>
  /** With `signal`: milliseconds from the signal to the process's exit (undefined: never sent). */
  exitedAfterSignalMs?: number
}

/** The step succeeded: exit code 0 and no `::error::` line (both shown when it did not). */
export function expectSucceeded(run: ActionRun): void {
  expect({ code: run.code, errors: run.stdout.split('\n').filter((l) => l.startsWith('::error')) }).toEqual({ code: 0, errors: [] })
}

/** A signal to send the process mid-run, as GitHub does when it cancels a step (or Ctrl-C). */
export interface SignalMidRun {
  signal: NodeJS.Signals
  /** Sent once the process has printed this (on standard output or error). */
  when: string | RegExp
}

/**
 * Sends `mid.signal` to `child` once its output matches `mid.when`; resolves with when it was sent.
 * `output` is called with each chunk the caller collects.
 */
export function signalMidRun(child: ChildProcess, mid: SignalMidRun | undefined): { sentAt: () => number | undefined; feed: (text: string) => void } {
  let seen = ''
  let sentAt: number | undefined
  return {
    sentAt: () => sentAt,
    feed: (text) => {
      if (!mid || sentAt !== undefined) return
      seen += text
      if (typeof mid.when === 'string' ? seen.includes(mid.when) : mid.when.test(seen)) {
        sentAt = Date.now()
        child.kill(mid.signal)
      }
    }
  }
}

/** Parses the runner's file-command format: name<<DELIMITER\nvalue\nDELIMITER. */
export function parseFileCommands(text: string): Record<string, string> {
  const values: Record<string, string> = {}
  const re = /^(.+?)<<(\S+)\n([\s\S]*?)\n?\2$/gm
  for (const m of text.matchAll(re)) values[m[1]] = m[3]
  return values
}

/** Runs one step of the action: `main` (default) or `post` with the state `main` saved. */
export async function runAction(
  inputs: Record<string, string>,
  options: { post?: ActionRun; env?: Record<string, string>; signal?: SignalMidRun; onOutput?: (text: string) => void } = {}
): Promise<ActionRun> {
  const dir = mkdtempSync(join(tmpdir(), 'job-sweeper-step-'))
  const files = {
    GITHUB_OUTPUT: join(dir, 'output'),
    GITHUB_STEP_SUMMARY: join(dir, 'summary'),
    GITHUB_STATE: join(dir, 'state'),
    GITHUB_ENV: join(dir, 'env')
  }
  for (const f of Object.values(files)) writeFileSync(f, '')
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    RUNNER_TEMP: dir,
    KUBECONFIG: testCluster().kubeconfig,
    ...files
  }
  for (const [name, value] of Object.entries({ ...declaredInputs(), ...inputs })) env[`INPUT_${name.toUpperCase()}`] = value
  for (const [name, value] of Object.entries(options.post?.state ?? {})) env[`STATE_${name}`] = value
  const child = spawn(process.execPath, [bundle], { env: { ...env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  const mid = signalMidRun(child, options.signal)
  child.stdout.on('data', (c: Buffer) => ((stdout += c.toString()), mid.feed(c.toString()), options.onOutput?.(c.toString())))
  child.stderr.on('data', (c: Buffer) => ((stderr += c.toString()), mid.feed(c.toString()), options.onOutput?.(c.toString())))
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)))
  const sentAt = mid.sentAt()
  return {
    code,
    exitedAfterSignalMs: sentAt === undefined ? undefined : Date.now() - sentAt,
    stdout,
    stderr,
    outputs: parseFileCommands(readFileSync(files.GITHUB_OUTPUT, 'utf8')),
    summary: readFileSync(files.GITHUB_STEP_SUMMARY, 'utf8'),
    state: parseFileCommands(readFileSync(files.GITHUB_STATE, 'utf8')),
    exported: parseFileCommands(readFileSync(files.GITHUB_ENV, 'utf8'))
  }
}

/** The JSON array of one of the pruned/kept/waited outputs, as names. */
export function outputNames(run: ActionRun, output: string): string[] {
  return (JSON.parse(run.outputs[output] ?? '[]') as { name: string }[]).map((j) => j.name).sort()
}

/** What the runner sets about the workflow run (read by @actions/github's context). */
export const WORKFLOW_RUN_ENV = {
  GITHUB_ACTIONS: 'true',
  GITHUB_REPOSITORY: 'acme/shop',
  GITHUB_RUN_ID: '4242',
  GITHUB_SERVER_URL: 'https://github.example',
  GITHUB_SHA: '0123456789abcdef0123456789abcdef01234567'
}
export const WORKFLOW_RUN_URL = 'https://github.example/acme/shop/actions/runs/4242'
