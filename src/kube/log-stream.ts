// One read of a container's log into a file: client-node's Log streams it, a watchdog gives up on
// a stream that stalls (or never starts), and the bytes are counted against the limit.
import { createWriteStream } from 'node:fs'
import { truncate } from 'node:fs/promises'
import { PassThrough } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Log } from '@kubernetes/client-node'
import type { SavedLog } from './jobs-client.ts'

/** Which log, how much of it, and how long a silent stream is waited for. */
export interface LogRead {
  namespace: string
  pod: string
  container: string
  /** The restart before the current one. */
  previous: boolean
  limitBytes: number
  stallMs: number
}

/**
 * Streams the log to `file` (created 0600, or truncated), at most `limitBytes` of it; `started` is
 * called once the API server answered. One byte more than the limit is asked for: a log of exactly
 * the limit is whole, not cut.
 */
export async function streamLog(logs: Log, read: LogRead, file: string, started: () => void): Promise<SavedLog> {
  const { namespace, pod, container, previous, limitBytes, stallMs } = read
  const counter = new PassThrough()
  let bytes = 0
  let stall: NodeJS.Timeout | undefined
  let request: AbortController | undefined
  const fail = (e: unknown): void => {
    request?.abort()
    counter.destroy(e instanceof Error ? e : new Error(String(e)))
  }
  const watchdog = (): void => {
    clearTimeout(stall)
    stall = setTimeout(() => fail(Object.assign(new Error(`log stream sent nothing for ${stallMs / 1000}s`), { name: 'TimeoutError' })), stallMs)
  }
  counter.on('data', (chunk: Buffer) => {
    bytes += chunk.length
    watchdog()
  })
  // client-node pipes the response into `counter` but does not forward the response's errors:
  // without this, a connection cut mid-log is an unhandled 'error' event that kills the process.
  counter.on('pipe', (source) => source.once('error', fail))
  const written = pipeline(counter, createWriteStream(file, { mode: 0o600 }))
  watchdog()
  try {
    request = await logs.log(namespace, pod, container, counter, { previous, follow: false, limitBytes: limitBytes + 1 })
    started()
  } catch (e) {
    fail(e)
  }
  try {
    await written
  } finally {
    clearTimeout(stall)
  }
  if (bytes <= limitBytes) return { bytes, truncated: false }
  await truncate(file, limitBytes)
  return { bytes: limitBytes, truncated: true }
}
