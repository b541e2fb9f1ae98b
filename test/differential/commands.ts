// The cluster's helm and kubectl run without blocking the test's event loop (testenv's run() waits
// in spawnSync): a group installs its releases side by side, and a pending-revision scenario
// kills a helm it started, with SIGKILL, while the helm is still waiting.
import { spawn, type ChildProcess } from 'node:child_process'
import { testCluster, type CommandResult } from '../cluster/testenv.ts'

/** A helm or kubectl started in the background: its result once it exits, and the process to kill. */
export interface Started {
  child: ChildProcess
  done: Promise<CommandResult>
}

export function start(command: 'helm' | 'kubectl', args: string[]): Started {
  const cluster = testCluster()
  const child = spawn(command, args, {
    env: { ...process.env, KUBECONFIG: cluster.kubeconfig, PATH: `${cluster.binDir}:${process.env.PATH}` },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()))
  const done = new Promise<CommandResult>((resolve) => {
    child.on('error', (e) => resolve({ code: -1, stdout, stderr: `${stderr}${e.message}` }))
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : -1), stdout, stderr }))
  })
  return { child, done }
}

export const helmAsync = (...args: string[]): Promise<CommandResult> => start('helm', args).done
export const kubectlAsync = (...args: string[]): Promise<CommandResult> => start('kubectl', args).done

/** kubectl that must succeed: its stdout, or an error with its stderr. */
export async function kubectlOk(...args: string[]): Promise<string> {
  const got = await kubectlAsync(...args)
  if (got.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${got.code}): ${got.stderr}`)
  return got.stdout
}

/** kubectl apply (or create: `verb`) of objects given as JSON, written to its stdin. */
export async function kubectlWith(verb: 'apply' | 'create', objects: object[], ...flags: string[]): Promise<string> {
  const cluster = testCluster()
  const child = spawn('kubectl', [verb, '-f', '-', ...flags], {
    env: { ...process.env, KUBECONFIG: cluster.kubeconfig, PATH: `${cluster.binDir}:${process.env.PATH}` },
    stdio: ['pipe', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  child.stdin.end(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }))
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)))
  if (code !== 0) throw new Error(`kubectl ${verb} ${flags.join(' ')} failed (${code}): ${stderr}`)
  return stdout
}
