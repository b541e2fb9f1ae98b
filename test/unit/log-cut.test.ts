// A cut keeps the end (src/kube/log-cut.ts, issue 26 item 5): past max-log-bytes a log keeps its
// first quarter and its last three quarters, a line in the file says how many bytes were cut
// between them, and the summary's last lines are the log's real last lines. Streamed: the head is
// written as it comes, and no more than the tail's share is held.
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import type { V1Pod } from '@kubernetes/client-node'
import type { LogTarget } from '../../src/kube/jobs-client.ts'
import { cutMarker } from '../../src/kube/log-cut.ts'
import { streamLog, type OpenLog } from '../../src/kube/log-stream.ts'
import { executorOf } from '../fake/executor.ts'
import { fileAt } from './log-targets.ts'
import { newJob } from './jobs.ts'

const read = { namespace: 'prod', pod: 'p', container: 'main', previous: false, stallMs: 10_000 }

/** Lines `line 00001` … `line <count>`, each ending with a newline (11 bytes a line). */
const numbered = (count: number, from = 1): string => Array.from({ length: count }, (_, i) => `line ${String(from + i).padStart(5, '0')}\n`).join('')

/** Serves `text` in chunks of `size` bytes, as a slow API server would, so every boundary falls mid-chunk somewhere. */
const served =
  (text: string | Buffer, size = 7): OpenLog =>
  async () => {
    const bytes = Buffer.from(text)
    return Readable.from(
      (function* () {
        for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size)
      })()
    )
  }

const tmp = (): string => mkdtempSync(join(tmpdir(), 'log-cut-'))

test('a log of 3× max-log-bytes in numbered lines: the file holds the first lines, the marker with the count cut, and the very last line; the last lines are the real last ones', async () => {
  // 4400 bytes: a head of 1100 (100 lines) and a tail of 3300 (300 lines), out of 1200 lines.
  const log = numbered(1200)
  expect(log.length).toBe(3 * 4400)
  const file = join(tmp(), 'main.log')
  const saved = await streamLog(served(log), read, { maxBytes: 4400, lastLines: 20 }, fileAt(file), () => undefined)
  const text = readFileSync(file, 'utf8')
  expect(text).toBe(`${numbered(100)}${cutMarker(8800)}\n${numbered(300, 901)}`)
  expect(text.startsWith('line 00001\n')).toBe(true)
  expect(text.endsWith('line 01200\n')).toBe(true)
  expect(saved).toEqual({
    bytes: Buffer.byteLength(text),
    truncated: true,
    cutBytes: 8800,
    logBytes: log.length,
    lastLines: numbered(20, 1181).trimEnd().split('\n')
  })
})

test('a cut that falls mid-line: the head is kept to the byte, the marker gets a line of its own, the tail starts at a line; the count adds up', async () => {
  const log = numbered(300) // 3300 bytes
  const file = join(tmp(), 'main.log')
  const saved = await streamLog(served(log, 64), read, { maxBytes: 1000, lastLines: 3 }, fileAt(file), () => undefined)
  const text = readFileSync(file, 'utf8')
  // The head: 250 bytes, ending inside line 23.
  expect(text.slice(0, 251)).toBe(`${log.slice(0, 250)}\n`)
  const marker = /^\[job-sweeper: (\d+) bytes cut here \(max-log-bytes\)\]$/m.exec(text)
  expect(marker).not.toBeNull()
  const tail = text.slice((marker?.index ?? 0) + (marker?.[0].length ?? 0) + 1)
  expect(tail.startsWith('line ')).toBe(true)
  expect(log.endsWith(tail)).toBe(true)
  expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(750)
  expect(250 + Number(marker?.[1]) + Buffer.byteLength(tail)).toBe(log.length)
  expect(saved.cutBytes).toBe(Number(marker?.[1]))
  expect(saved.lastLines).toEqual(['line 00298', 'line 00299', 'line 00300'])
})

test('a log of exactly max-log-bytes is whole, with no marker; one byte more is cut (positive control)', async () => {
  const dir = tmp()
  const log = numbered(40) // 440 bytes
  const whole = await streamLog(served(log), read, { maxBytes: 440, lastLines: 2 }, fileAt(join(dir, 'whole.log')), () => undefined)
  expect(readFileSync(join(dir, 'whole.log'), 'utf8')).toBe(log)
  expect(whole).toMatchObject({ truncated: false, cutBytes: 0, bytes: 440, lastLines: ['line 00039', 'line 00040'] })
  const cut = await streamLog(served(log), read, { maxBytes: 439, lastLines: 2 }, fileAt(join(dir, 'cut.log')), () => undefined)
  expect(readFileSync(join(dir, 'cut.log'), 'utf8')).toContain('bytes cut here (max-log-bytes)]\n')
  expect(readFileSync(join(dir, 'cut.log'), 'utf8').endsWith('line 00040\n')).toBe(true)
  expect(cut).toMatchObject({ truncated: true, lastLines: ['line 00039', 'line 00040'] })
})

test('a cut never splits a character: one long line of 2-, 3- and 4-byte characters stays valid UTF-8 on both sides', async () => {
  const log = Buffer.from('é€😀'.repeat(500)) // 9 bytes a round, no newline at all
  const file = join(tmp(), 'main.log')
  const saved = await streamLog(served(log, 5), read, { maxBytes: 1001, lastLines: 0 }, fileAt(file), () => undefined)
  const bytes = readFileSync(file)
  const text = bytes.toString('utf8')
  expect(text).not.toContain('\uFFFD')
  const [head, tail] = text.split(/\n?\[job-sweeper: \d+ bytes cut here \(max-log-bytes\)\]\n/)
  expect(log.toString('utf8').startsWith(head)).toBe(true)
  expect(log.toString('utf8').endsWith(tail)).toBe(true)
  expect(Buffer.byteLength(head) + saved.cutBytes + Buffer.byteLength(tail)).toBe(log.length)
  expect(Buffer.byteLength(head) + Buffer.byteLength(tail)).toBeLessThanOrEqual(1001)
})

test('streamed: the head is written before the log has ended, and no more than the tail’s share is held (64 MiB through a 1 MiB budget)', async () => {
  const MiB = 1024 ** 2
  const total = 64 * MiB
  let sent = 0
  let peak = 0
  const start = process.memoryUsage().arrayBuffers
  const chunk = Buffer.alloc(64 * 1024, 'x\n')
  const openLog: OpenLog = async () =>
    Readable.from(
      (function* () {
        for (; sent < total; sent += chunk.length) {
          peak = Math.max(peak, process.memoryUsage().arrayBuffers - start)
          yield sent + chunk.length < total ? chunk : Buffer.from(`${'x\n'.repeat(chunk.length / 2 - 3)}xlast\n`)
        }
      })()
    )
  // The target notes how much of the log had been sent when its first bytes arrived.
  let sentAtFirstWrite = -1
  const received: Buffer[] = []
  const target = async (): Promise<LogTarget> => ({
    write: async (body) => {
      for await (const piece of body) {
        if (sentAtFirstWrite < 0) sentAtFirstWrite = sent
        received.push(piece as Buffer)
      }
    },
    discard: async () => undefined
  })
  const saved = await streamLog(openLog, read, { maxBytes: MiB, lastLines: 1 }, target, () => undefined)
  expect(sentAtFirstWrite).toBeGreaterThanOrEqual(0)
  expect(sentAtFirstWrite).toBeLessThan(MiB)
  expect(Buffer.concat(received).toString('latin1').endsWith('x\nxlast\n')).toBe(true)
  expect(saved).toMatchObject({ truncated: true, logBytes: total, lastLines: ['xlast'] })
  // Never the log: a few budgets at most (the tail's window, the chunks in flight, the test's own).
  expect(peak).toBeLessThan(16 * MiB)
})

test('through the executor: a failed Job’s log of 3× max-log-bytes is saved cut with its end, and the summary’s last lines are its real last lines', async () => {
  const dir = tmp()
  const failed = newJob({ name: 'app-migrate', release: 'app', status: 'failed' })
  const ex = executorOf({ release: 'app', 'logs-dir': dir, 'max-log-bytes': '4400' }, [failed])
  const pod: V1Pod = {
    metadata: { name: 'app-migrate-x1', creationTimestamp: new Date() },
    spec: { containers: [{ name: 'main', image: 'x' }] },
    status: {
      phase: 'Failed',
      containerStatuses: [{ name: 'main', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 1 } } }]
    }
  }
  ex.client.addPod(failed, pod, { main: `${numbered(1199)}ERROR: relation "tuples" already exists\n` })
  const result = await ex.execute()
  expect(result.errors).toEqual([])
  const [outcome] = result.outcomes
  expect(outcome.result).toBe('pruned')
  const file = readFileSync(join(dir, 'prod/app-migrate/uid-app-migrate/app-migrate-x1/main.log'), 'utf8')
  expect(file.startsWith(numbered(100))).toBe(true)
  expect(file.endsWith('ERROR: relation "tuples" already exists\n')).toBe(true)
  expect(outcome.logs?.tails).toEqual([
    {
      file: 'prod/app-migrate/uid-app-migrate/app-migrate-x1/main.log',
      lines: [...numbered(19, 1181).trimEnd().split('\n'), 'ERROR: relation "tuples" already exists']
    }
  ])
  expect(result.warnings).toEqual([
    'logs of Job prod/app-migrate: 1 log(s) longer than max-log-bytes (4400 bytes): their start and end are saved, the middle is cut'
  ])
})
