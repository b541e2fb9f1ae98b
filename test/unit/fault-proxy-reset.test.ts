// The fault proxy's reset of a connection whose write side is already shutting down (the HTTP
// server or the peer ended it): resetAndDestroy() there fails in libuv and leaves a TCP handle
// Node never closes, so the process never exits, spinning in its exit (what kept jest from
// exiting after the global teardown). resetConnection destroys such a socket instead.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const reset = pathToFileURL(join(import.meta.dirname, '..', 'faults', 'reset.ts')).href
let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'proxy-reset-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A server that ends each connection, then resets it with `how` right after; exits once the client saw it closed. */
function endThenReset(how: string): Promise<{ code: number | null; stdout: string }> {
  const file = join(dir, `${how.replace(/\W/g, '')}.mjs`)
  writeFileSync(
    file,
    `import { createServer, connect } from 'node:net'
import { resetConnection } from '${reset}'
const server = createServer((raw) => {
  raw.on('error', (e) => console.log('error ' + e.code))
  raw.end()
  process.nextTick(() => { ${how}; server.close() })
}).listen(0, '127.0.0.1', () => {
  const client = connect(server.address().port, '127.0.0.1')
  client.on('error', () => undefined)
  client.on('close', () => console.log('client closed'))
})
`
  )
  const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'ignore'] })
  let stdout = ''
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
  const kill = setTimeout(() => child.kill('SIGKILL'), 20_000)
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(kill)
      resolve({ code, stdout })
    })
  )
}

test('resetConnection on a socket whose end is under way: the connection closes and the process exits', async () => {
  expect(await endThenReset('resetConnection(raw)')).toEqual({ code: 0, stdout: 'client closed\n' })
}, 60_000)

test('control: resetAndDestroy there fails with EINVAL and the process never exits (killed after 20 s)', async () => {
  const run = await endThenReset('raw.resetAndDestroy()')
  expect(run.stdout).toContain('error EINVAL')
  expect(run.stdout).toContain('client closed') // every test-visible part ended…
  expect(run.code).toBeNull() // …but the process did not: SIGKILLed
}, 60_000)
