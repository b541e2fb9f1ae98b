// Runs the bundled CLI (the package's bin, dist/cli/job-sweeper.mjs) as a user's shell would, with
// the test cluster's kubeconfig in KUBECONFIG unless `env` says otherwise.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { signalMidRun, type SignalMidRun } from './action.ts'
import { testCluster } from './cluster/testenv.ts'

const cli = join(import.meta.dirname, '..', 'dist', 'cli', 'job-sweeper.mjs')

export interface CliRun {
  code: number
  stdout: string
  stderr: string
  /** With `signal`: milliseconds from the signal to the process's exit (undefined: never sent). */
  exitedAfterSignalMs?: number
}

export async function runCli(args: string[], env: Record<string, string | undefined> = {}, signal?: SignalMidRun): Promise<CliRun> {
  const child = spawn(process.execPath, [cli, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, KUBECONFIG: testCluster().kubeconfig, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  const mid = signalMidRun(child, signal)
  child.stdout.on('data', (c: Buffer) => ((stdout += c.toString()), mid.feed(c.toString())))
  child.stderr.on('data', (c: Buffer) => ((stderr += c.toString()), mid.feed(c.toString())))
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)))
  const sentAt = mid.sentAt()
  return { code, stdout, stderr, exitedAfterSignalMs: sentAt === undefined ? undefined : Date.now() - sentAt }
}
