// The turns suites take on the shared control plane (test/cluster/suite-environment.ts): shared
// suites run side by side, a whole-cluster suite waits for them and runs alone, and a dead
// worker's turn blocks nobody.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { takeCluster } from '../cluster/suite-environment.ts'

let dir: string
beforeEach(() => (dir = join(mkdtempSync(join(tmpdir(), 'suite-lock-')), 'suites')))
afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }))

/** Whether the promise settled within `ms`. */
async function settled(p: Promise<unknown>, ms = 800): Promise<boolean> {
  return Promise.race([p.then(() => true), sleep(ms, false, { ref: false })])
}

test('shared suites run side by side', async () => {
  const a = await takeCluster(dir, false, 'a')
  expect(await settled(takeCluster(dir, false, 'b'))).toBe(true)
  a()
})

test('a whole-cluster suite waits for the shared ones, and new shared ones wait for it', async () => {
  const a = await takeCluster(dir, false, 'a')
  const whole = takeCluster(dir, true, 'whole')
  expect(await settled(whole)).toBe(false)
  const b = takeCluster(dir, false, 'b')
  expect(await settled(b)).toBe(false)
  a()
  const releaseWhole = await whole
  expect(await settled(b)).toBe(false)
  releaseWhole()
  ;(await b)()
  expect(readdirSync(dir)).toEqual([])
})

test('two whole-cluster suites take turns', async () => {
  const first = await takeCluster(dir, true, 'first')
  const second = takeCluster(dir, true, 'second')
  expect(await settled(second)).toBe(false)
  first()
  ;(await second)()
})

test('a whole-cluster suite that waits goes before shared suites, even those that waited longer', async () => {
  const first = await takeCluster(dir, true, 'first')
  const shared = takeCluster(dir, false, 'shared')
  await sleep(100)
  const second = takeCluster(dir, true, 'second')
  expect(await settled(second)).toBe(false)
  first()
  const releaseSecond = await second
  expect(await settled(shared)).toBe(false)
  releaseSecond()
  ;(await shared)()
})

test("a dead worker's turn blocks nobody", async () => {
  // A positive control first: a live holder's shared turn (this process's) does block.
  const live = await takeCluster(dir, false, 'live')
  expect(await settled(takeCluster(dir, true, 'blocked'), 600)).toBe(false)
  live()
  await sleep(600)
  for (const f of readdirSync(dir)) rmSync(join(dir, f), { recursive: true, force: true })
  // No process has pid 2^22 + 1 (above Linux's pid_max limit).
  writeFileSync(join(dir, 'shared-4194305-1'), '4194305')
  expect(await settled(takeCluster(dir, true, 'whole'))).toBe(true)
})
