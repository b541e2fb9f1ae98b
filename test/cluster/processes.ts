// Starting and stopping the control plane's processes. Each runs detached in its own process
// group with its output in a log file, and its pid is recorded in the cluster directory, so the
// process that started a cluster (`npm run cluster:up`) can exit and another one
// (`npm run cluster:down`, jest's teardown) can stop it later.
import { spawn } from 'node:child_process'
import { openSync, closeSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'

/** How a process was started, as recorded in `<dir>/commands/<name>.json` (no secrets). */
export interface ProcessCommand {
  /** Absolute path of the binary. */
  command: string
  /** Its flags, in order. */
  args: string[]
  /** Variables set on top of the starter's environment (only these are recorded). */
  env: Record<string, string>
  /** Secret variables, each read at every start from the file named (mode 0600): only the paths are recorded. */
  envFiles?: Record<string, string>
}

/**
 * Starts `command` detached, logging to `<dir>/logs/<name>.log` and recording its pid, and its
 * command so that startProcessAgain() can start it again exactly as it was. A secret reaches the
 * process through `envFiles` (variable → file), never through its flags, which `ps` shows.
 */
export function startProcess(
  dir: string,
  name: string,
  command: string,
  args: string[],
  env: Record<string, string> = {},
  envFiles: Record<string, string> = {}
): number {
  for (const sub of ['commands', 'logs', 'pids']) mkdirSync(join(dir, sub), { recursive: true })
  writeFileSync(join(dir, 'commands', `${name}.json`), JSON.stringify({ command, args, env, envFiles } satisfies ProcessCommand, null, 2))
  const secrets = Object.fromEntries(Object.entries(envFiles).map(([variable, file]) => [variable, readFileSync(file, 'utf8').trim()]))
  const log = openSync(join(dir, 'logs', `${name}.log`), 'a')
  try {
    const child = spawn(command, args, { detached: true, stdio: ['ignore', log, log], cwd: dir, env: { ...process.env, ...env, ...secrets } })
    if (child.pid === undefined) throw new Error(`could not start ${command}`)
    child.unref()
    writeFileSync(join(dir, 'pids', name), String(child.pid))
    return child.pid
  } finally {
    closeSync(log)
  }
}

/** Starts process `name` of the cluster in `dir` again with its recorded command; returns its pid. */
export function startProcessAgain(dir: string, name: string): number {
  const file = join(dir, 'commands', `${name}.json`)
  if (!existsSync(file)) throw new Error(`${file} is missing: the cluster was started before commands were recorded`)
  const recorded = JSON.parse(readFileSync(file, 'utf8')) as ProcessCommand
  return startProcess(dir, name, recorded.command, recorded.args, recorded.env, recorded.envFiles)
}

/** The pid recorded for process `name`, or 0 when there is none. */
export function recordedPid(dir: string, name: string): number {
  const file = join(dir, 'pids', name)
  const pid = existsSync(file) ? Number(readFileSync(file, 'utf8')) : 0
  return Number.isInteger(pid) && pid > 0 ? pid : 0
}

/** True while the process exists (a zombie of ours counts until reaped). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The last lines of a component's log, for error messages. */
export function logTail(dir: string, name: string, lines = 15): string {
  try {
    return readFileSync(join(dir, 'logs', `${name}.log`), 'utf8')
      .trimEnd()
      .split('\n')
      .slice(-lines)
      .join('\n')
  } catch {
    return '(no log)'
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/**
 * Stops every process recorded under `<dir>/pids` (or only those named in `only`), in reverse
 * start order: SIGTERM to the whole process group, then SIGKILL after `graceMs`. Returns the
 * names of the processes it stopped.
 */
export async function stopProcesses(dir: string, graceMs = 5000, only?: string[]): Promise<string[]> {
  let names: string[]
  try {
    names = readdirSync(join(dir, 'pids')).filter((name) => !only || only.includes(name))
  } catch {
    return []
  }
  const running = names
    .map((name) => ({ name, pid: Number(readFileSync(join(dir, 'pids', name), 'utf8')) }))
    .filter((p) => Number.isInteger(p.pid) && p.pid > 0)
  const signal = (pid: number, sig: NodeJS.Signals): void => {
    try {
      process.kill(-pid, sig)
    } catch {
      // already gone
    }
  }
  for (const p of running.reverse()) signal(p.pid, 'SIGTERM')
  const deadline = Date.now() + graceMs
  while (running.some((p) => isAlive(p.pid)) && Date.now() < deadline) await sleep(100)
  for (const p of running) if (isAlive(p.pid)) signal(p.pid, 'SIGKILL')
  const killDeadline = Date.now() + 5000
  while (running.some((p) => isAlive(p.pid)) && Date.now() < killDeadline) await sleep(50)
  for (const p of running) rmSync(join(dir, 'pids', p.name), { force: true })
  return running.map((p) => p.name)
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

/** Polls `check` until it returns true, failing with `describe()` after `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, describe: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      if (await check()) return
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}\n${describe()}`)
    await sleep(200)
  }
}
