// The exit watchdog the global teardown arms (test/cluster/exit-watchdog.ts), in a child process
// as jest's own: a process kept alive by a promise loop, or by an open handle, is ended with exit
// code 1 and the loop's function or the handle named; a process that ends by itself is left alone.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const watchdog = pathToFileURL(join(import.meta.dirname, '..', 'cluster', 'exit-watchdog.ts')).href
let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'exit-watchdog-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Runs `body` as a module that armed the watchdog first (grace 300 ms); kills it after 60 s. */
function runWithWatchdog(name: string, body: string): Promise<{ code: number | null; stderr: string; ms: number }> {
  const file = join(dir, `${name}.mjs`)
  writeFileSync(file, `import { armExitWatchdog } from '${watchdog}'\narmExitWatchdog(300)\n${body}\n`)
  const started = Date.now()
  const child = spawn(process.execPath, [file], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  const kill = setTimeout(() => child.kill('SIGKILL'), 60_000)
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(kill)
      resolve({ code, stderr, ms: Date.now() - started })
    })
  )
}

test('a promise loop that never yields: exit code 1, the loop named on every sample', async () => {
  const run = await runWithWatchdog('spin', 'async function pollForever() { for (;;) await null }\nsetTimeout(pollForever, 10)')
  expect(run.code).toBe(1)
  expect(run.stderr).toContain('jest did not exit 0.3s after the global teardown')
  expect(run.stderr.match(/^ {4}at pollForever \(file:\/\/.*spin\.mjs:3\)$/gm)).toHaveLength(3)
  expect(run.stderr).toContain('ending the run with exit code 1')
}, 90_000)

test('an open handle and an idle event loop: exit code 1, the handle named', async () => {
  const run = await runWithWatchdog('idle', "import { createServer } from 'node:net'\ncreateServer().listen(0, '127.0.0.1')")
  expect(run.code).toBe(1)
  expect(run.stderr).toContain('no JavaScript running (waiting on the event loop)')
  expect(run.stderr).toMatch(/^still open: .*TCPServerWrap/m)
}, 90_000)

test('control: a process that ends by itself ends as it would, silent, without waiting for the grace', async () => {
  const run = await runWithWatchdog('clean', 'setTimeout(() => undefined, 50)')
  expect(run).toMatchObject({ code: 0, stderr: '' })
  expect(run.ms).toBeLessThan(30_000) // the grace is 0.3 s; well under any wait of its own
}, 90_000)
