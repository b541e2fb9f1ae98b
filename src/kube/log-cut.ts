// A log longer than max-log-bytes keeps its head and its tail, with one line between them saying
// how many bytes were cut there. The end of a failed Job's log is where its error is (the stack
// trace, the last statement, "exit status 1"), and its head says what it was started with (the
// version, the configuration, the command): so the budget goes a quarter to the head and three
// quarters to the tail. The log is streamed once: the head goes out as it comes, the tail waits in
// a window of at most its share of the budget, dropped from its front as newer bytes arrive, and
// goes out at the end, after the marker. Memory is bounded by the tail's share, never the log.
import { Transform, type TransformCallback } from 'node:stream'

/** The share of max-log-bytes kept from the start of a cut log; the rest is kept from its end. */
export const HEAD_SHARE = 0.25

/** Bytes of the end the summary's last lines are taken from (they are a few lines, never the log). */
const TAIL_WINDOW_BYTES = 8192

/** The line that stands where a cut log's middle was (and a newline before it, when the head ends mid-line). */
export const cutMarker = (cutBytes: number): string => `[job-sweeper: ${cutBytes} bytes cut here (max-log-bytes)]`

/** What a cut (or whole) log came to. */
export interface CutResult {
  /** Bytes written out: the log, or its head, the marker line and its tail. */
  bytes: number
  /** Bytes of the log as the API server sent it. */
  logBytes: number
  /** Bytes of the log that were not written (0: the log is whole). */
  cutBytes: number
  /** The last lines of what was written (the log's real end), when they were asked for. */
  lastLines: string[]
}

const NEWLINE = 0x0a
/** A UTF-8 continuation byte (10xxxxxx): a character does not start there. */
const continues = (byte: number | undefined): boolean => byte !== undefined && (byte & 0xc0) === 0x80

/** The first `take` bytes of `chunks` are gone from the window; returns the last byte removed. */
function dropFront(chunks: Buffer[], take: number): number | undefined {
  let last: number | undefined
  while (take > 0 && chunks.length > 0) {
    const first = chunks[0]
    if (first.length <= take) {
      chunks.shift()
      take -= first.length
      last = first[first.length - 1]
    } else {
      chunks[0] = first.subarray(take)
      last = first[take - 1]
      take = 0
    }
  }
  return last
}

/** The byte at `index` of the window. */
function byteAt(chunks: Buffer[], index: number): number | undefined {
  for (const chunk of chunks) {
    if (index < chunk.length) return chunk[index]
    index -= chunk.length
  }
  return undefined
}

/** The position just after the first newline within the window's first `within` bytes, if any. */
function afterFirstNewline(chunks: Buffer[], within: number): number | undefined {
  let offset = 0
  for (const chunk of chunks) {
    const at = chunk.subarray(0, within - offset).indexOf(NEWLINE)
    if (at >= 0) return offset + at + 1
    offset += chunk.length
    if (offset >= within) return undefined
  }
  return undefined
}

/**
 * Passes a log through, keeping at most `limitBytes` of it: the whole log when it fits, else its
 * first quarter (HEAD_SHARE), the marker line, and its last three quarters. The cut falls on a
 * character boundary, and the kept tail starts at a line's start when a line starts in it. With
 * `lastLines`, the last lines of what was written are kept for result().
 */
export class LogCut extends Transform {
  private readonly headLimit: number
  private readonly limitBytes: number
  private readonly lastLineCount: number
  private headBytes = 0
  private headEndsLine = true
  private readonly tail: Buffer[] = []
  private tailBytes = 0
  private cutBytes = 0
  /** The last byte cut out of the tail window: a newline means the kept tail starts a line. */
  private lastCut: number | undefined
  /** The last TAIL_WINDOW_BYTES seen, for the last lines. */
  private readonly recent: Buffer[] = []
  private recentBytes = 0
  private logBytes = 0
  private written = 0
  private done: CutResult | undefined

  constructor(limitBytes: number, lastLines = 0) {
    super()
    this.limitBytes = limitBytes
    this.headLimit = Math.floor(limitBytes * HEAD_SHARE)
    this.lastLineCount = lastLines
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.logBytes += chunk.length
    this.remember(chunk)
    let rest = chunk
    if (this.headBytes < this.headLimit || (this.headBytes > 0 && this.tailBytes === 0 && continues(rest[0]))) {
      let take = Math.min(rest.length, Math.max(0, this.headLimit - this.headBytes))
      // A character the head's limit falls in goes whole into the head (at most 3 bytes more).
      while (take < rest.length && continues(rest[take])) take++
      if (take > 0) {
        this.out(rest.subarray(0, take))
        this.headBytes += take
        this.headEndsLine = rest[take - 1] === NEWLINE
        rest = rest.subarray(take)
      }
    }
    if (rest.length > 0) {
      this.tail.push(rest)
      this.tailBytes += rest.length
      const room = this.limitBytes - this.headBytes
      if (this.tailBytes > room) {
        const over = this.tailBytes - room
        this.lastCut = dropFront(this.tail, over)
        this.tailBytes -= over
        this.cutBytes += over
      }
    }
    callback()
  }

  override _flush(callback: TransformCallback): void {
    if (this.cutBytes > 0) {
      // The kept tail starts at a line's start: a partial first line is cut too, unless it is all there is.
      if (this.lastCut !== NEWLINE) {
        let skip = afterFirstNewline(this.tail, this.tailBytes - 1) ?? 0
        // One long line: it starts at a character's start, at least.
        if (skip === 0) while (skip < this.tailBytes && continues(byteAt(this.tail, skip))) skip++
        dropFront(this.tail, skip)
        this.tailBytes -= skip
        this.cutBytes += skip
      }
      this.out(Buffer.from(`${this.headEndsLine ? '' : '\n'}${cutMarker(this.cutBytes)}\n`))
    }
    for (const chunk of this.tail) this.out(chunk)
    this.done = {
      bytes: this.written,
      logBytes: this.logBytes,
      cutBytes: this.cutBytes,
      lastLines: this.lastLines()
    }
    callback()
  }

  /** What was written; defined once the log ended. */
  result(): CutResult | undefined {
    return this.done
  }

  private out(chunk: Buffer): void {
    this.written += chunk.length
    this.push(chunk)
  }

  private remember(chunk: Buffer): void {
    if (this.lastLineCount === 0) return
    this.recent.push(chunk)
    this.recentBytes += chunk.length
    const over = this.recentBytes - TAIL_WINDOW_BYTES
    if (over > 0) {
      dropFront(this.recent, over)
      this.recentBytes -= over
    }
  }

  /** The last lines of what was written: after the marker when the log was cut, of the whole log otherwise. */
  private lastLines(): string[] {
    if (this.lastLineCount === 0) return []
    // What was written after the marker (or all of it) and is still in the window.
    const span = Math.min(this.recentBytes, this.cutBytes > 0 ? this.tailBytes : this.logBytes)
    const window = Buffer.concat(this.recent).subarray(this.recentBytes - span)
    const lines = window.toString('utf8').trimEnd().split('\n')
    // The window may start mid-line: that line is not shown partly.
    const whole = span === (this.cutBytes > 0 ? this.tailBytes : this.logBytes)
    return (whole ? lines : lines.slice(1)).slice(-this.lastLineCount)
  }
}
