// Runs a command with exactly the environment given (nothing inherited), for tests that must
// prove what a process can reach: an installed package, a pod's service account.
import { spawn } from 'node:child_process'

export interface CommandRun {
  code: number
  stdout: string
  stderr: string
}

export async function runCommand(command: string, args: string[], env: Record<string, string>, cwd?: string): Promise<CommandRun> {
  const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (c) => resolve(c ?? -1))
  })
  return { code, stdout, stderr }
}
