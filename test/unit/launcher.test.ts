// The launcher (src/launch/engine-thread.ts) ends a cancelled run that does not stop by itself:
// on a second signal at once, else CANCEL_DEADLINE_MS after the first, well within GitHub's 7.5 s
// between SIGINT and SIGTERM. The engine here is a worker that ignores the cancellation.
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { CANCEL_DEADLINE_MS } from '../../src/launch/engine-thread.ts'

const launcher = join(import.meta.dirname, '..', '..', 'src', 'launch', 'engine-thread.ts')

const STUBBORN = "import { parentPort } from 'node:worker_threads'\nparentPort.on('message', () => {})\nsetInterval(() => {}, 1000)\nconsole.log('running')\n"

/** Runs the launcher (with `args`) over an engine (by default one that never stops); sends `signals` once it is running. */
async function runStubborn(
  signals: NodeJS.Signals[],
  source = STUBBORN,
  args: string[] = []
): Promise<{ code: number | null; stderr: string; afterFirstMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'launcher-'))
  const engine = join(dir, 'engine.mjs')
  writeFileSync(engine, source)
  const main = join(dir, 'main.mjs')
  writeFileSync(
    main,
    `import { runEngine } from ${JSON.stringify(pathToFileURL(launcher).href)}\nrunEngine(new URL(${JSON.stringify(pathToFileURL(engine).href)}))\n`
  )
  const child = spawn(process.execPath, [main, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  let first = 0
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  child.stdout.on('data', () => {
    if (first !== 0) return
    first = Date.now()
    for (const [i, signal] of signals.entries()) setTimeout(() => child.kill(signal), i * 200)
  })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, stderr, afterFirstMs: Date.now() - first }
}

test('a second signal ends the process at once', async () => {
  const run = await runStubborn(['SIGINT', 'SIGTERM'])
  expect(run.code).toBe(1)
  expect(run.stderr).toBe('job-sweeper: stopped at a second signal (SIGTERM), before the cancelled run had finished\n')
  expect(run.afterFirstMs).toBeLessThan(CANCEL_DEADLINE_MS)
})

test(`one signal, and an engine that does not stop: the process ends ${CANCEL_DEADLINE_MS / 1000}s later, before GitHub's SIGTERM`, async () => {
  const run = await runStubborn(['SIGINT'])
  expect(run.code).toBe(1)
  expect(run.stderr).toBe(`job-sweeper: stopped ${CANCEL_DEADLINE_MS / 1000}s after SIGINT, before the cancelled run had finished\n`)
  expect(run.afterFirstMs).toBeGreaterThanOrEqual(CANCEL_DEADLINE_MS - 100)
  expect(run.afterFirstMs).toBeLessThan(7_500)
})

test('the keeper posts a longer deadline (its --shutdown-grace): a stop that takes 7 s after SIGTERM ends on its own, exit 0', async () => {
  // As cli/keeper.ts does: the deadline first, then the work; at the cancel, 7 s of archiving left, then a clean end.
  const keeper = [
    "import { parentPort } from 'node:worker_threads'",
    'parentPort.postMessage({ cancelDeadlineMs: 12000 })',
    'const busy = setInterval(() => {}, 1000)',
    "parentPort.on('message', () => setTimeout(() => { clearInterval(busy); parentPort.unref(); process.exitCode = 0 }, 7000))",
    "console.log('running')",
    ''
  ].join('\n')
  const run = await runStubborn(['SIGTERM'], keeper, ['keeper'])
  expect(run.stderr).toBe('')
  expect(run.code).toBe(0)
  expect(run.afterFirstMs).toBeGreaterThanOrEqual(7_000 - 100)
}, 20_000)
