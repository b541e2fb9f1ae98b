// Runs a workflow of test/act/ with nektos/act in host mode (no containers: the steps run on this
// machine), an implementation of the GitHub Actions runner that nobody here wrote, and reads its
// JSON log. scripts/act.sh builds act once per machine.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer as createHttpServer, request as httpRequest } from 'node:http'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { testCluster } from '../cluster/testenv.ts'

export const repository = join(import.meta.dirname, '..', '..')

/** Builds act if this machine has not yet (a minute or two on 2 cores); returns the binary's path. */
export function buildAct(): string {
  const script = join(repository, 'scripts', 'act.sh')
  const result = spawnSync(script, ['--build-only'], { encoding: 'utf8', timeout: 20 * 60_000, stdio: ['ignore', 'pipe', 'inherit'] })
  if (result.status !== 0) throw new Error(`scripts/act.sh --build-only failed (exit ${result.status}, signal ${result.signal})`)
  return result.stdout.trim()
}

/** One line of act's `--json` log (the fields the tests read). */
export interface ActLogLine {
  msg: string
  level: string
  jobID?: string
  /** The step's name, or what it uses (`./`) when it has none. */
  step?: string
  stage?: 'Main' | 'Post' | 'Pre'
  stepResult?: 'success' | 'failure' | 'skipped'
  jobResult?: 'success' | 'failure'
  /** A workflow command act handled (error, warning, summary, …). */
  command?: string
}

export interface ActRun {
  code: number
  lines: ActLogLine[]
  /** Every line's message, as act prints it (secrets masked). */
  log: string
  stderr: string
}

export interface ActOptions {
  /** A directory for act's artifact server to keep uploads in (<dir>/<run id>/<name>/<name>.zip); none: no server runs. */
  artifacts?: string
}

/** A loopback port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * A pass-through in front of act's artifact server (v0.2.89), for one bug of act's: the upload URL
 * it signs carries its signature's base64 padding as a bare '=' (`sig=…kko=`), which the Azure
 * blob client of @actions/artifact drops when it adds its own parameters, so act refuses every
 * upload with 401 (nektos/act#6021, upload-artifact@v6 alike). GitHub's service signs real Azure
 * URLs. The shim percent-encodes that '=' in CreateArtifact's answer and forwards every request
 * and answer otherwise as they are; the upload URLs act signs point at the shim (act takes the
 * host from the request), so the uploads go through it too.
 */
async function signatureShim(serverPort: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = createHttpServer((req, res) => {
    const upstream = httpRequest({ host: '127.0.0.1', port: serverPort, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      if (!req.url?.endsWith('/CreateArtifact')) {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
        return
      }
      const chunks: Buffer[] = []
      answer.on('data', (c: Buffer) => chunks.push(c))
      answer.on('end', () => {
        const body = Buffer.concat(chunks)
          .toString()
          .replace(/([?&]sig=[\w-]+)(=+)/, (_, head: string, padding: string) => head + '%3D'.repeat(padding.length))
        res.writeHead(answer.statusCode ?? 502, { ...answer.headers, 'content-length': Buffer.byteLength(body) })
        res.end(body)
      })
    })
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) }
}

/** The artifacts act's server holds in `dir`: name → the zip's path. */
export function artifactsIn(dir: string): Map<string, string> {
  const found = new Map<string, string>()
  for (const run of existsSync(dir) ? readdirSync(dir) : [])
    for (const name of readdirSync(join(dir, run))) {
      const zip = join(dir, run, name, `${name}.zip`)
      if (existsSync(zip)) found.set(name, zip)
    }
  return found
}

/** The entries of a zip (its files' paths), and one entry's bytes: with unzip, which .ci/run installs. */
export function zipEntries(zip: string): string[] {
  return execFileSync('zipinfo', ['-1', zip], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l !== '' && !l.endsWith('/'))
    .sort()
}
export function zipEntry(zip: string, entry: string): Buffer {
  return execFileSync('unzip', ['-p', zip, entry], { maxBuffer: 64 * 1024 ** 2 })
}

/**
 * Runs `act push` (the binary `act` from buildAct) on one workflow of test/act/. `vars` are the workflow's `vars` context and
 * `secrets` its `secrets` context; both reach act as files, never on its command line. The steps
 * see only PATH (Node 24 first, then the cluster's helm and kubectl) and a private HOME: host mode
 * hands act's own environment to every step, and no KUBECONFIG may reach the action but its input.
 */
export async function runAct(
  act: string,
  workflow: string,
  vars: Record<string, string>,
  secrets: Record<string, string>,
  options: ActOptions = {}
): Promise<ActRun> {
  const dir = mkdtempSync(join(tmpdir(), 'job-sweeper-act-'))
  const serverPort = await freePort()
  const shim = options.artifacts === undefined ? undefined : await signatureShim(serverPort)
  const file = (name: string, values: Record<string, string>): string => {
    const path = join(dir, name)
    writeFileSync(
      path,
      Object.entries(values)
        .map(([k, v]) => `${k}=${v}\n`)
        .join(''),
      { mode: 0o600 }
    )
    return path
  }
  const home = join(dir, 'home')
  mkdirSync(home)
  const args = [
    'push',
    '--json',
    '-W',
    join(import.meta.dirname, workflow),
    '-C',
    repository,
    // Host mode: no Docker engine here, and none is needed to run a node action.
    '-P',
    'ubuntu-latest=-self-hosted',
    '--no-cache-server',
    '--action-offline-mode',
    '--action-cache-path',
    join(dir, 'cache'),
    '--secret-file',
    file('secrets', secrets),
    '--var-file',
    file('vars', vars),
    // act reads ./.env and ./.input by default: empty files instead.
    '--env-file',
    file('env', {}),
    '--input-file',
    file('input', {}),
    // act tells every step where its artifact server is (ACTIONS_RESULTS_URL), by default at this
    // machine's outbound address: loopback instead, and a port of this run's own.
    '--artifact-server-addr',
    '127.0.0.1',
    '--artifact-server-port',
    String(serverPort),
    ...(options.artifacts === undefined ? [] : ['--artifact-server-path', options.artifacts])
  ]
  const env = {
    PATH: `${dirname(process.execPath)}:${testCluster().binDir}:${process.env.PATH ?? ''}`,
    HOME: home,
    TMPDIR: dir,
    ACT_DISABLE_VERSION_CHECK: '1',
    // act gives the steps this as ACTIONS_RESULTS_URL (else its server's own address).
    ...(shim ? { ACTIONS_RUNTIME_URL: shim.url } : {})
  }
  const child = spawn(act, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)))
  await shim?.close()
  rmSync(dir, { recursive: true, force: true })
  const lines = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as ActLogLine)
  return { code, lines, log: lines.map((l) => l.msg).join('\n'), stderr }
}

/** The result act gave one stage of a step of a job: success, failure, skipped, or undefined (it never ran). */
export function stepResult(run: ActRun, jobID: string, stage: 'Main' | 'Post', step: string): string | undefined {
  return run.lines.find((l) => l.jobID === jobID && l.stage === stage && l.step === step && l.stepResult)?.stepResult
}

/** The messages one stage of a step printed (its log lines and the commands act handled). */
export function stepLog(run: ActRun, jobID: string, stage: 'Main' | 'Post', step: string): string {
  return run.lines
    .filter((l) => l.jobID === jobID && l.stage === stage && l.step === step)
    .map((l) => l.msg)
    .join('\n')
}

/** What the step wrote to GITHUB_STEP_SUMMARY, as act prints it after the step (masked); '' if nothing. */
export function stepSummary(run: ActRun, jobID: string, stage: 'Main' | 'Post', step: string): string {
  const line = run.lines.find((l) => l.jobID === jobID && l.stage === stage && l.step === step && l.command === 'summary')
  return line?.msg.replace(/^\s*⚙\s+Summary - /u, '') ?? ''
}
