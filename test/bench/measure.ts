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

/** The machine's CPU time so far, busy and in all, in clock ticks (the first line of /proc/stat). */
function cpuTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  const total = fields.reduce((a, b) => a + b, 0)
  const idle = fields[3] + (fields[4] ?? 0) // idle, iowait
  return { busy: total - idle, total }
}

/**
 * Waits until the whole machine has been idle for a moment (busy below `below` of its CPU over
 * `windowMs`; at most `maxMs`), so that each contender starts on a settled cluster: after a set-up
 * of thousands of Jobs, the controller manager and the API server go on finishing their pods for
 * tens of seconds, and whoever is measured first would pay for it.
 */
export async function settle(log: (line: string) => void, { below = 0.15, windowMs = 3000, maxMs = 180_000 } = {}): Promise<void> {
  const started = performance.now()
  for (;;) {
    const a = cpuTicks()
    await new Promise((resolve) => setTimeout(resolve, windowMs))
    const b = cpuTicks()
    const busy = (b.busy - a.busy) / Math.max(1, b.total - a.total)
    const waited = performance.now() - started
    if (busy < below) return log(`settled: the machine is ${(busy * 100).toFixed(0)}% busy (after ${seconds(waited)})`)
    if (waited >= maxMs) return log(`not settled after ${seconds(waited)}: the machine is still ${(busy * 100).toFixed(0)}% busy; measuring anyway`)
  }
}
