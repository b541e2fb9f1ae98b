// Measuring a command as a user's shell would run it: wall time from spawn to exit, and peak RSS
// from GNU time (the kernel's maxrss of the process it waited for). Children run asynchronously,
// so the benchmark's own work (watches, timers) goes on meanwhile.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** How one command went. */
export interface Measured {
  code: number
  wallMs: number
  /** Peak resident set size in MB (MiB), from /usr/bin/time. */
  peakRssMb: number
  stdout: string
  stderr: string
}

/** The bundled CLI, run the way `npx job-sweeper` runs it. */
export const CLI = [process.execPath, join(import.meta.dirname, '..', '..', 'dist', 'cli', 'job-sweeper.mjs')]

/** Runs `command` under /usr/bin/time with `env` (PATH and HOME are passed on). */
export async function measure(command: string[], env: Record<string, string>): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'job-sweeper-measure-'))
  const rssFile = join(dir, 'rss')
  const started = performance.now()
  const child = spawn('/usr/bin/time', ['-f', '%M', '-o', rssFile, ...command], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const out: Buffer[] = []
  const err: Buffer[] = []
  child.stdout.on('data', (c: Buffer) => out.push(c))
  child.stderr.on('data', (c: Buffer) => err.push(c))
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)))
  const wallMs = performance.now() - started
  try {
    const kb = Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop())
    return { code, wallMs, peakRssMb: kb / 1024, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Fails the benchmark loudly when a measured command did not do its job. */
export function mustSucceed(what: string, run: Measured): Measured {
  if (run.code !== 0) throw new Error(`${what} exited ${run.code}:\n${run.stderr.slice(-2000)}`)
  return run
}

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`
export const mb = (n: number): string => `${n.toFixed(0)} MB`
