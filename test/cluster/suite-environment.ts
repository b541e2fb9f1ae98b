// The test environment of every suite: Node's, plus a turn on the shared control plane. Suites run
// two at a time (jest workers), each in namespaces of its own; a suite that acts on the whole
// cluster (stops kube-apiserver, sweeps every namespace, installs cluster-wide objects) says so in
// its first docblock with `@cluster whole`, and runs alone. Between worker processes this is a
// readers-writer lock of files in the cluster's directory: a suite holds it from the environment's
// setup to its teardown, after every afterAll of the suite.
//
// Hand-written (about 60 lines): the registry's file locks are mutexes (proper-lockfile, lockfile),
// which would run every suite alone, or locks within one process (rwlock, async-rwlock).
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment'
import { TestEnvironment } from 'jest-environment-node'
import { needsWholeCluster } from './suite-sequencer.ts'

const POLL_MS = 250

/** Turns asked for by this process (a worker holds one at a time; the count keeps file names unique). */
let taken = 0

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The pid a lock file or the whole-cluster directory records; 0 when not (yet) written. */
function owner(path: string): number {
  try {
    return Number(readFileSync(path, 'utf8')) || 0
  } catch {
    return 0
  }
}

/** The lock files of a worker that died without its teardown are removed, so they block nobody. */
function clearStale(dir: string): void {
  const whole = join(dir, 'whole')
  const wholeOwner = owner(join(whole, 'pid'))
  if (wholeOwner && !alive(wholeOwner)) rmSync(whole, { recursive: true, force: true })
  for (const f of readdirSync(dir)) {
    if ((f.startsWith('shared-') || f.startsWith('want-')) && !alive(owner(join(dir, f)))) rmSync(join(dir, f), { force: true })
  }
}

const sharedHolders = (dir: string): string[] => readdirSync(dir).filter((f) => f.startsWith('shared-'))
/** A whole-cluster suite holds the cluster, or waits for it (and goes before new shared suites). */
const wholeFirst = (dir: string): boolean => readdirSync(dir).some((f) => f === 'whole' || f.startsWith('want-'))

/** Takes the cluster whole (no other suite runs) or shared (beside other shared suites); returns the release. */
export async function takeCluster(dir: string, whole: boolean, name: string): Promise<() => void> {
  mkdirSync(dir, { recursive: true })
  const want = join(dir, `want-${process.pid}-${++taken}`)
  if (whole) writeFileSync(want, String(process.pid))
  for (;;) {
    clearStale(dir)
    if (whole) {
      try {
        mkdirSync(join(dir, 'whole'))
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
        await sleep(POLL_MS)
        continue
      }
      rmSync(want, { force: true })
      writeFileSync(join(dir, 'whole', 'pid'), String(process.pid))
      writeFileSync(join(dir, 'whole', 'suite'), name)
      // New shared suites wait from now on; the running ones finish first.
      while (sharedHolders(dir).length > 0) {
        await sleep(POLL_MS)
        clearStale(dir)
      }
      return () => rmSync(join(dir, 'whole'), { recursive: true, force: true })
    }
    if (wholeFirst(dir)) {
      await sleep(POLL_MS)
      continue
    }
    const mine = join(dir, `shared-${process.pid}-${++taken}`)
    writeFileSync(mine, String(process.pid))
    // A whole-cluster suite may have taken it between the check and the file: it goes first.
    if (!wholeFirst(dir)) return () => rmSync(mine, { force: true })
    rmSync(mine, { force: true })
    await sleep(POLL_MS)
  }
}

export default class ClusterSuiteEnvironment extends TestEnvironment {
  private readonly testPath: string
  private readonly whole: boolean
  private release?: () => void
  /** The worker's open handles and requests before the suite: what it leaves beyond them is reported. */
  private before: string[] = []

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context)
    this.testPath = context.testPath
    this.whole = needsWholeCluster(this.testPath)
  }

  override async setup(): Promise<void> {
    await super.setup()
    this.before = process.getActiveResourcesInfo()
    const cluster = process.env.JOB_SWEEPER_CLUSTER
    // Unit suites (test/unit/) use no cluster.
    if (!cluster || this.testPath.includes('/test/unit/')) return
    const dir = join(JSON.parse(cluster).dir, 'suites')
    const turn = `${this.whole ? 'whole' : 'shared'} ${relative(process.cwd(), this.testPath)} (worker ${process.pid})`
    const released = await takeCluster(dir, this.whole, this.testPath)
    // <cluster dir>/suites.log: who ran when, to read when a suite seems to have met another.
    const log = (what: string): void => appendFileSync(join(dir, '..', 'suites.log'), `${new Date().toISOString()} ${what} ${turn}\n`)
    log('start')
    this.release = () => {
      released()
      log('end  ')
    }
  }

  override async teardown(): Promise<void> {
    this.release?.()
    await super.teardown()
    // What the suite left open keeps its worker from exiting at the end (jest then kills it, saying
    // only that "a worker process has failed to exit gracefully"): named here, suite by suite.
    await sleep(50)
    const left = [...this.before].reduce((open, r) => {
      const i = open.indexOf(r)
      return i < 0 ? open : [...open.slice(0, i), ...open.slice(i + 1)]
    }, process.getActiveResourcesInfo())
    if (left.length > 0) process.stderr.write(`${relative(process.cwd(), this.testPath)} left open: ${left.join(', ')}\n`)
  }
}
