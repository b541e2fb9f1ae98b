// What keeps jest from exiting, named instead of hidden. Jest runs the tests in band, in its own
// process: a socket, timer or promise loop a test leaves behind keeps that process alive after the
// global teardown, possibly spinning. forceExit would end such a run with exit code 0 and hide it.
// Armed at the end of the teardown, this watchdog waits; if the process is still there after the
// grace, it prints where the main thread is (its JavaScript stack, sampled a few times) and what
// is still open, then ends the run with exit code 1.
//
// It runs in a worker thread, which a spinning main thread cannot starve, and reaches the main
// thread through the inspector (a pause interrupts a promise loop as well as an idle event loop).
// It cannot see a hang inside Node's own exit, after the event loop has ended (Node stops worker
// threads first): a TCP handle Node never closes spins there (the fault proxy's reset did that
// once, test/faults/reset.ts); the teardown's list of what is still open names such a handle.
// It writes with writeSync to file descriptor 2: a worker's process.stderr goes through the main
// thread, which may never get to it.
import { Worker } from 'node:worker_threads'

/** How often the main thread is paused to see where it is. */
const SAMPLES = 3

const WATCHDOG = `
const { writeSync } = require('node:fs')
const { Session } = require('node:inspector')
const { workerData } = require('node:worker_threads')
const say = (text) => writeSync(2, text + '\\n')
setTimeout(async () => {
  const session = new Session()
  session.connectToMainThread()
  const post = (method, params = {}, ms = 5000) =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve(undefined), ms)
      session.post(method, params, (error, result) => {
        clearTimeout(timer)
        resolve(error ? undefined : result)
      })
    })
  const scripts = new Map()
  session.on('Debugger.scriptParsed', (m) => scripts.set(m.params.scriptId, m.params.url))
  say('\\njest did not exit ' + workerData.graceMs / 1000 + 's after the global teardown: something the tests started still runs in its process')
  await post('Debugger.enable', {}, 30000)
  for (let i = 1; i <= workerData.samples; i++) {
    const paused = new Promise((resolve) => {
      session.once('Debugger.paused', (m) => resolve(m.params.callFrames))
      setTimeout(() => resolve(undefined), 2000)
    })
    await post('Debugger.pause')
    const frames = await paused
    if (!frames) {
      say('main thread, sample ' + i + ': no JavaScript running (waiting on the event loop)')
      continue
    }
    say('main thread, sample ' + i + ':')
    for (const f of frames.slice(0, 12)) say('    at ' + (f.functionName || '<anonymous>') + ' (' + (f.url || scripts.get(f.location.scriptId) || '?') + ':' + (f.location.lineNumber + 1) + ')')
    await post('Debugger.resume')
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  // A pause still pending (the main thread ran no JavaScript) would stop the evaluation below.
  await post('Debugger.disable')
  const open = await post('Runtime.evaluate', { expression: 'process.getActiveResourcesInfo().join(", ")', returnByValue: true })
  say('still open: ' + (open?.result?.value || '(nothing)'))
  say('ending the run with exit code 1')
  await post('Runtime.evaluate', { expression: 'process.exit(1)' }, 5000)
  process.kill(process.pid, 'SIGKILL') // the main thread never ran the exit: it spins outside JavaScript
}, workerData.graceMs)
`

/**
 * After `graceMs`, if this process has not exited by then, prints where its main thread is and
 * what is still open, and exits with code 1. Never keeps a process alive by itself.
 */
export function armExitWatchdog(graceMs: number, samples = SAMPLES): void {
  const worker = new Worker(WATCHDOG, { eval: true, workerData: { graceMs, samples } })
  worker.unref()
}
