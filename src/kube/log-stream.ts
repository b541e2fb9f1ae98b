// One read of a container's log into a file: the API server's answer is streamed, a watchdog gives
// up on a read that stalls (or never starts), and the bytes are counted against the limit.
import type { WriteStream } from 'node:fs'
import { open, truncate } from 'node:fs/promises'
import { Transform, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { SavedLog } from './jobs-client.ts'

/** A request for a container's log, as pods/log takes it. */
export interface LogQuery {
  namespace: string
  pod: string
  container: string
  /** The restart before the current one. */
  previous: boolean
  /** At most this many bytes of it. */
  limitBytes: number
  /** Keep the answer open and send what the container writes next, until it ends. */
  follow?: boolean
}

/** Which log, how much of it, and how long a silent stream is waited for. */
export interface LogRead extends LogQuery {
  stallMs: number
}

/**
 * Starts a log read: resolves with the body once the API server answered 2xx, rejects with its
 * error (the Status it sent) otherwise. `signal` abandons the read.
 */
export type OpenLog = (query: LogQuery, signal: AbortSignal) => Promise<Readable>

/**
 * Streams the log to `file` (created 0600, or truncated), at most `limitBytes` of it; `started` is
 * called once the API server answered. One byte more than the limit is asked for: a log of exactly
 * the limit is whole, not cut. Every failure, before the first byte or after, rejects the returned
 * promise (a failed read), never the process.
 */
export async function streamLog(openLog: OpenLog, read: LogRead, file: string, started: () => void): Promise<SavedLog> {
  const { stallMs, limitBytes } = read
  // The file first: one that cannot be opened fails the read before any request is made.
  const handle = await open(file, 'w', 0o600)
  const abandon = new AbortController()
  let stall: NodeJS.Timeout | undefined
  const watchdog = (): void => {
    clearTimeout(stall)
    stall = setTimeout(() => abandon.abort(Object.assign(new Error(`log stream sent nothing for ${stallMs / 1000}s`), { name: 'TimeoutError' })), stallMs)
  }
  // The watchdog ends a read whose answer never comes even if the request ignores the signal: the
  // wait for the answer is raced against it, so it is awaited (and handled) wherever it fires.
  const abandoned = new Promise<never>((_, reject) => abandon.signal.addEventListener('abort', () => reject(abandon.signal.reason), { once: true }))
  let bytes = 0
  // Once it exists, the file's stream closes the file (when it ends, or fails).
  let output: WriteStream | undefined
  try {
    watchdog()
    const opening = openLog({ ...read, limitBytes: limitBytes + 1 }, abandon.signal)
    const body = await Promise.race([opening, abandoned]).catch((e: unknown) => {
      // An answer that comes after all is not read.
      opening.then(
        (late) => late.destroy(),
        () => undefined
      )
      throw e
    })
    started()
    abandon.signal.addEventListener('abort', () => body.destroy(abandon.signal.reason), { once: true })
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length
        watchdog()
        done(null, chunk)
      }
    })
    output = handle.createWriteStream()
    await pipeline(body, counter, output)
  } finally {
    clearTimeout(stall)
    if (!output) await handle.close()
  }
  if (bytes <= limitBytes) return { bytes, truncated: false }
  await truncate(file, limitBytes)
  return { bytes: limitBytes, truncated: true }
}
