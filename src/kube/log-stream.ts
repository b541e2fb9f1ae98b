// One read of a container's log into a target (a file, an upload): the API server's answer is
// streamed, a watchdog gives up on a read that stalls (or never starts), and past the byte limit
// the log keeps its head and its tail (log-cut.ts). The whole log is read: its end is what matters
// most, and the API server has no way to send only the end of a log by bytes. A container's log
// as the kubelet serves it is its current file, which the kubelet rotates at containerLogMaxSize
// (10Mi by default), so the read is bounded by the node's setting, and memory by the tail's share.
import type { Readable } from 'node:stream'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { LogKeep, LogTarget, SavedLog } from './jobs-client.ts'
import { LogCut } from './log-cut.ts'

/** A request for a container's log, as pods/log takes it. */
export interface LogQuery {
  namespace: string
  pod: string
  container: string
  /** The restart before the current one. */
  previous: boolean
  /** At most this many bytes of it (the API server cuts the rest); undefined: all of it. */
  limitBytes?: number
  /** Keep the answer open and send what the container writes next, until it ends. */
  follow?: boolean
}

/**
 * The log is gone from the node: the kubelet removed that container (it keeps only the newest run
 * of each container of a finished pod, so a restarted container's previous run goes when the pod
 * ends). The kubelet says so with 200 and its error as the body, which is no log: this error is
 * thrown instead of saving it, and the target is given up.
 */
export class LogGone extends Error {
  override name = 'LogGone'
}

/** The kubelet's body for a removed container (kuberuntime's GetContainerLogs): one line, the container's ID. */
const GONE = /^unable to retrieve container logs for [a-z][a-z0-9+.-]*:\/\/[0-9a-f]{64}$/
const GONE_PREFIX = 'unable to retrieve container logs for '
const GONE_MAX_BYTES = 160

/** Holds back a body that starts as the kubelet's gone answer, and is short enough to be one, until it ends; `gone` is set when it is. */
class GoneCheck extends Transform {
  gone: LogGone | undefined
  private held: Buffer[] = []
  private size = 0
  private passing = false

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: (e?: Error | null, data?: Buffer) => void): void {
    if (this.passing) return done(null, chunk)
    this.held.push(chunk)
    this.size += chunk.length
    // Only a body that starts as the kubelet's answer does is held; a log goes through at once.
    const start = Buffer.concat(this.held).subarray(0, GONE_PREFIX.length).toString('latin1')
    if (this.size <= GONE_MAX_BYTES && GONE_PREFIX.startsWith(start)) return done()
    this.passing = true
    done(null, Buffer.concat(this.held))
    this.held = []
  }

  override _flush(done: (e?: Error | null, data?: Buffer) => void): void {
    if (this.passing || this.size === 0) return done()
    const body = Buffer.concat(this.held).toString('latin1')
    if (!GONE.test(body)) return done(null, Buffer.concat(this.held))
    this.gone = new LogGone(body)
    done(this.gone)
  }
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
 * Streams the log into the target `openTarget` gives (opened first: a target that cannot be opened
 * fails the read before any request is made), keeping what `keep` says; `started` is called once
 * the API server answered. Every failure, before the first byte or after, rejects the returned
 * promise, never the process: a failed read with the read's error (the target is then given up,
 * and leaves nothing that looks complete), a failed write with the target's own error, never the
 * error of a read it stopped. `stop` abandons the read (with its reason) when it aborts.
 */
export async function streamLog(
  openLog: OpenLog,
  read: LogRead,
  keep: LogKeep,
  openTarget: () => Promise<LogTarget>,
  started: () => void,
  stop?: AbortSignal
): Promise<SavedLog> {
  const { stallMs } = read
  const target = await openTarget()
  const abandon = new AbortController()
  // The run's end (its cancellation, after a grace): the read is abandoned as a stalled one is.
  if (stop?.aborted) abandon.abort(stop.reason)
  else stop?.addEventListener('abort', () => abandon.abort(stop.reason), { once: true })
  let stall: NodeJS.Timeout | undefined
  const watchdog = (): void => {
    clearTimeout(stall)
    stall = setTimeout(() => abandon.abort(Object.assign(new Error(`log stream sent nothing for ${stallMs / 1000}s`), { name: 'TimeoutError' })), stallMs)
  }
  // The watchdog ends a read whose answer never comes even if the request ignores the signal: the
  // wait for the answer is raced against it, so it is awaited (and handled) wherever it fires.
  const abandoned = new Promise<never>((_, reject) => abandon.signal.addEventListener('abort', () => reject(abandon.signal.reason), { once: true }))
  try {
    watchdog()
    const opening = openLog({ ...read, limitBytes: undefined }, abandon.signal)
    let body: Readable
    try {
      body = await Promise.race([opening, abandoned])
    } catch (e) {
      // An answer that comes after all is not read.
      opening.then(
        (late) => late.destroy(),
        () => undefined
      )
      await target.discard().catch(() => undefined)
      throw e
    }
    started()
    abandon.signal.addEventListener('abort', () => body.destroy(abandon.signal.reason), { once: true })
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        watchdog()
        done(null, chunk)
      }
    })
    const goneCheck = new GoneCheck()
    const cut = new LogCut(keep.maxBytes, keep.lastLines)
    // Which side failed first: a target that fails stops the read, and a read that fails makes the
    // target fail (its input was destroyed); each time, the first failure is the one to report.
    // The body's error comes before the pipeline destroys the target's input with it.
    let writeFailure: { error: unknown } | undefined
    let readFailed = false
    body.once('error', () => {
      readFailed ||= writeFailure === undefined
    })
    const writing = target.write(cut).catch((e: unknown) => {
      if (readFailed) return
      writeFailure = { error: e }
      body.destroy()
    })
    const reading = await pipeline(body, counter, goneCheck, cut).then(
      () => undefined,
      (e: unknown) => ({ error: e })
    )
    await writing
    if (goneCheck.gone) {
      await target.discard().catch(() => undefined)
      throw goneCheck.gone
    }
    if (writeFailure) throw writeFailure.error
    if (reading) throw reading.error
    const result = cut.result()
    if (!result) throw new Error('the log ended before it was cut')
    return { bytes: result.bytes, truncated: result.cutBytes > 0, cutBytes: result.cutBytes, logBytes: result.logBytes, lastLines: result.lastLines }
  } finally {
    clearTimeout(stall)
  }
}
