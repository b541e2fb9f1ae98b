// Where a cut fault ends a response body: a byte budget that a stream is passed through.
import type { CutFault } from './rules.ts'

const NEWLINE = 0x0a

/** Splits a response body into what the client still gets and the point where it is cut. */
export class StreamCutter {
  private passed = 0
  private lines = 0
  /** Bytes still allowed once `afterEvents` lines have passed; undefined until then. */
  private lineBudget: number | undefined
  private readonly fault: CutFault

  constructor(fault: CutFault) {
    if (fault.afterBytes === undefined && fault.afterEvents === undefined) throw new Error('Invalid cut fault: expected afterBytes or afterEvents')
    this.fault = fault
    if (fault.afterEvents === 0) this.lineBudget = fault.plusBytes ?? 20
  }

  /** The part of `chunk` to forward, and whether the stream is cut right after it. */
  take(chunk: Buffer): { pass: Buffer; cut: boolean } {
    const cuts: number[] = []
    if (this.fault.afterBytes !== undefined) {
      const left = this.fault.afterBytes - this.passed
      if (left <= chunk.length) cuts.push(Math.max(0, left))
    }
    if (this.fault.afterEvents !== undefined) {
      let from = 0
      while (this.lineBudget === undefined) {
        const nl = chunk.indexOf(NEWLINE, from)
        if (nl < 0) break
        this.lines++
        from = nl + 1
        if (this.lines >= this.fault.afterEvents) this.lineBudget = (this.fault.plusBytes ?? 20) + from
      }
      // lineBudget counts from the start of this chunk the first time, then from later chunks.
      if (this.lineBudget !== undefined) {
        if (this.lineBudget <= chunk.length) cuts.push(this.lineBudget)
        else this.lineBudget -= chunk.length
      }
    }
    const cut = cuts.length > 0
    const end = cut ? Math.min(...cuts) : chunk.length
    this.passed += end
    return { pass: chunk.subarray(0, end), cut }
  }
}
