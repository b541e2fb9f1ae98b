// What a fault test uses to see a fault from the client's side.
import { execFile } from 'node:child_process'
import type { CommandResult } from '../cluster/testenv.ts'

/**
 * Runs a command (kubectl, helm, the CLI) without blocking this process. A child that talks to a
 * FaultProxy must be run this way: spawnSync (testenv's run()) would block the event loop the
 * proxy serves from, and the child would hang until its timeout.
 */
export function runAsync(command: string, args: string[], env: Record<string, string>, timeoutMs = 120_000): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(command, args, { env: { ...process.env, ...env }, timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
      resolve({ code, stdout, stderr })
    })
  })
}

/**
 * The system error code (ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET…) somewhere in an error's
 * cause chain: undici's fetch, under @kubernetes/client-node, wraps it as `TypeError: fetch
 * failed` with the socket error as its cause.
 */
export function networkErrorCode(error: unknown): string | undefined {
  let e: unknown = error
  for (let depth = 0; depth < 6 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string') return code
    e = (e as { cause?: unknown }).cause
  }
  return undefined
}

/** Resolves with the rejection of `promise` (fails if it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (e) {
    return e
  }
  throw new Error('expected the request to fail, but it succeeded')
}
