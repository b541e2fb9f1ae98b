// `npm run demo`, the README's first command, as a user runs it: on the cluster of
// `npm run cluster:up` (started for it, and stopped after, when none runs), its Jobs on the real
// node when the machine runs one, so what it shows live and saves is a real container's log.
import { spawn } from 'node:child_process'
import { join } from 'node:path'

const realNode = process.env.JOB_SWEEPER_REAL_NODE ?? ''

test('the demo runs the whole story; on the real node, the live log and the saved log are the containers’ own', async () => {
  const root = join(import.meta.dirname, '..')
  const child = spawn(join(root, 'scripts', 'demo.sh'), [], { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (c: Buffer) => (output += c.toString()))
  child.stderr.on('data', (c: Buffer) => (output += c.toString()))
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)))
  expect({ code, tail: output.slice(-3000) }).toEqual({ code: 0, tail: expect.any(String) })
  // The story: the upgrade fails on the immutable Job, pre waits and prunes, post sets TTLs by outcome.
  expect(output).toMatch(/field is immutable|is inva/)
  expect(output).toContain('✅ 1 pruned (1 after waiting) · 0 kept')
  expect(output).toContain('❌ 1 failed: Job ')
  // Finished before post looked (TTL set), or still running then (waited, then TTL set): the seed's timing on the node decides.
  expect(output).toMatch(/app-seed +failed +(waited [^ ]+( 1s)?, then )?TTL set/)
  if (realNode) {
    expect(output).toContain(`The Jobs run on the real node ${realNode}`)
    // Streamed live while pre waited, from the running container.
    expect(output).toMatch(/\/app-migrate\/app-migrate-\w+\/migrate \| migrate: connecting to database\n/)
    expect(output).toMatch(/\/app-migrate\/app-migrate-\w+\/migrate \| migrate: done\n/)
    // The failed seed's saved log, as its container wrote it (stdout, then stderr a second later).
    expect(output).toContain('seed: loading fixtures for version 2\nseed: ERROR: duplicate key value violates unique constraint "users_pkey"\n')
  } else {
    expect(output).toContain("the Jobs run on kwok's fake node")
  }
}, 300_000)
