// The one harvest path writes to one sink interface (src/store/sink.ts); these are its branches
// over the disk sink, without a cluster: a log is there only once complete (a failed read leaves
// no half file, and the previous run's file stays until the new one is whole), a sink that fails
// stops the read and is reported in its own words (never retried as if the cluster had failed),
// and each harvested Job gets a job.json after its logs: its status, why it failed, its Warning
// Events and each log with its size, whole or cut. The bucket sink is tested against the cluster's
// real S3 server (test/logs-s3.test.ts), never a mock of the SDK.
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import type { V1Pod } from '@kubernetes/client-node'
import type { JobFile } from '../../src/execute/job-file.ts'
import type { LogTarget } from '../../src/kube/jobs-client.ts'
import { streamLog } from '../../src/kube/log-stream.ts'
import { DiskSink } from '../../src/store/disk-sink.ts'
import { SinkError } from '../../src/store/sink.ts'
import { executorOf } from '../fake/executor.ts'
import { newJob } from './jobs.ts'

const tmp = (): string => mkdtempSync(join(tmpdir(), 'log-sink-'))
const read = { namespace: 'prod', pod: 'p', container: 'main', previous: false, stallMs: 10_000 }
const keep = { maxBytes: 1000, lastLines: 0 }

describe('the disk sink', () => {
  test('a key is written whole under the directory, folders 0700 and files 0600, and no .partial is left', async () => {
    const dir = tmp()
    const sink = new DiskSink(dir)
    const object = await sink.open('prod/app-migrate/app-migrate-x1/main.log', 'text/plain')
    await object.write(Readable.from([Buffer.from('line 1\n'), Buffer.from('line 2\n')]))
    const file = join(dir, 'prod/app-migrate/app-migrate-x1/main.log')
    expect(readFileSync(file, 'utf8')).toBe('line 1\nline 2\n')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(join(dir, 'prod/app-migrate')).mode & 0o777).toBe(0o700)
    expect(readdirSync(join(dir, 'prod/app-migrate/app-migrate-x1'))).toEqual(['main.log'])
  })

  test('a read that breaks mid-log leaves no file, and the previous run’s file stays as it was', async () => {
    const dir = tmp()
    const sink = new DiskSink(dir)
    const file = join(dir, 'prod/j/p/main.log')
    await (await sink.open('prod/j/p/main.log', 'text/plain')).write(Readable.from(['the previous run’s log\n']))
    const body = new PassThrough()
    body.write('half a log\n')
    // The read breaks 20 ms after it was asked for (the target is opened first, which may take longer on a busy machine).
    const breaking = async (): Promise<PassThrough> => {
      setTimeout(() => body.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })), 20)
      return body
    }
    await expect(
      streamLog(
        breaking,
        read,
        keep,
        () => sink.open('prod/j/p/main.log', 'text/plain'),
        () => undefined
      )
    ).rejects.toMatchObject({
      code: 'ECONNRESET'
    })
    expect(readFileSync(file, 'utf8')).toBe('the previous run’s log\n')
    expect(readdirSync(join(dir, 'prod/j/p'))).toEqual(['main.log'])
    // And a first run's broken read leaves nothing at all.
    const again = new PassThrough()
    again.write('half\n')
    await expect(
      streamLog(
        async () => {
          setTimeout(() => again.destroy(new Error('terminated')), 20)
          return again
        },
        read,
        keep,
        () => sink.open('prod/j/p/other.log', 'text/plain'),
        () => undefined
      )
    ).rejects.toThrow('terminated')
    expect(existsSync(join(dir, 'prod/j/p/other.log'))).toBe(false)
    expect(readdirSync(join(dir, 'prod/j/p'))).toEqual(['main.log'])
  })

  test('a directory that cannot be written fails at open, in words that name the file, before the log is asked for', async () => {
    const dir = tmp()
    writeFileSync(join(dir, 'prod'), 'a file where a folder should be')
    const sink = new DiskSink(dir)
    let asked = false
    const opening = streamLog(
      async () => {
        asked = true
        return Readable.from(['x'])
      },
      read,
      keep,
      () => sink.open('prod/j/p/main.log', 'text/plain'),
      () => undefined
    )
    await expect(opening).rejects.toThrow(new SinkError(`cannot write ${join(dir, 'prod/j/p/main.log')} (ENOTDIR)`))
    expect(asked).toBe(false)
  })
})

test('a target that fails mid-log stops the read at once, and its own error is the one reported (no status, no cause: no retry of the read takes it for the cluster’s)', async () => {
  const body = new PassThrough()
  body.write('a log line\n')
  const refused = new SinkError("logs-dir 's3://bucket/p': cannot upload p/x to bucket 'bucket': 403 AccessDenied: Access Denied")
  const target = async (): Promise<LogTarget> => ({
    write: async (input) => {
      // The store refuses once the first bytes come.
      await new Promise((resolve) => input.once('readable', resolve))
      throw refused
    },
    discard: async () => undefined
  })
  const started = Date.now()
  await expect(
    streamLog(
      async () => body,
      read,
      keep,
      target,
      () => undefined
    )
  ).rejects.toBe(refused)
  // At once, not when the stall watchdog (10 s here) gives up on a read nobody takes any more.
  expect(Date.now() - started).toBeLessThan(2000)
  expect(body.destroyed).toBe(true)
  expect(Object.keys(refused)).not.toContain('cause')
})

describe('job.json beside the logs', () => {
  const pod = (exitCode: number): V1Pod => ({
    metadata: { name: 'app-migrate-x1', uid: 'pod-uid-1', creationTimestamp: new Date('2026-06-01T11:50:00Z') },
    spec: { containers: [{ name: 'main', image: 'x' }] },
    status: {
      phase: exitCode ? 'Failed' : 'Succeeded',
      containerStatuses: [
        { name: 'main', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode, reason: exitCode ? 'Error' : 'Completed' } } }
      ]
    }
  })

  test('a failed Job: its status, failure reason, Warning Events and each log with its size, whole or cut, written after the logs', async () => {
    const dir = tmp()
    const failed = newJob({ name: 'app-migrate', release: 'app', status: 'failed' })
    failed.status = { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: new Date('2026-06-01T11:59:00Z') }] }
    const ex = executorOf({ release: 'app', 'logs-dir': dir, 'max-log-bytes': '100' }, [failed])
    ex.client.addPod(failed, pod(1), { main: `${'migrating…\n'.repeat(30)}ERROR: relation "tuples" already exists\n` })
    ex.client.addEvent({
      metadata: { name: 'e1', namespace: 'prod' },
      involvedObject: { kind: 'Pod', name: 'app-migrate-x1', uid: 'pod-uid-1', namespace: 'prod' },
      type: 'Warning',
      reason: 'BackOff',
      message: 'Back-off restarting failed container main',
      count: 3,
      lastTimestamp: new Date('2026-06-01T11:58:00Z')
    })
    const result = await ex.execute()
    expect(result.errors).toEqual([])
    const file = JSON.parse(readFileSync(join(dir, 'prod/app-migrate/uid-app-migrate/job.json'), 'utf8')) as JobFile
    const log = readFileSync(join(dir, 'prod/app-migrate/uid-app-migrate/app-migrate-x1/main.log'))
    expect(file).toMatchObject({
      format: 'job-sweeper.io/job/v1',
      namespace: 'prod',
      name: 'app-migrate',
      uid: 'uid-app-migrate',
      savedBy: { phase: 'pre' },
      status: 'failed',
      conditions: [{ type: 'Failed', reason: 'BackoffLimitExceeded', since: '2026-06-01T11:59:00.000Z' }],
      failureReason: 'BackoffLimitExceeded (its pods failed more often than backoffLimit allows); pod app-migrate-x1: container main exit code 1',
      events: [
        {
          object: 'Pod app-migrate-x1',
          reason: 'BackOff',
          message: 'Back-off restarting failed container main',
          count: 3,
          lastSeen: '2026-06-01T11:58:00.000Z'
        }
      ],
      logs: [{ file: 'app-migrate-x1/main.log', bytes: log.length, complete: false, logBytes: 30 * 13 + 40, cutBytes: expect.any(Number) }],
      neverRan: [],
      failures: []
    })
    expect(log.toString()).toContain(`[job-sweeper: ${file.logs[0].cutBytes} bytes cut here (max-log-bytes)]`)
    // After the logs: the last call that wrote anything is job.json's Events read, after the log's read.
    const calls = ex.client.calls.map((c) => c.method)
    expect(calls.indexOf('saveLog')).toBeLessThan(calls.indexOf('listWarningEvents'))
  })

  test('two Jobs of one name, one after the other (pre deletes the first, the next sweep its re-creation): both archives stay, each job.json naming its uid', async () => {
    const dir = tmp()
    const run = (inputs: Record<string, string>, uid: string, podName: string, log: string): ReturnType<typeof executorOf> => {
      const job = newJob({ name: 'app-migrate', release: 'app', status: 'failed', finishedAgo: 60 })
      job.metadata!.uid = uid
      const ex = executorOf({ ...inputs, release: 'app', 'logs-dir': dir }, [job])
      ex.client.addPod(job, { ...pod(1), metadata: { name: podName, uid: `pod-${uid}` } }, { main: log })
      return ex
    }
    expect((await run({}, 'uid-first', 'app-migrate-a1', 'first\n').execute()).errors).toEqual([])
    const sweep = await run({ phase: 'sweep', ttl: '0s', 'failure-grace': '0s' }, 'uid-second', 'app-migrate-b1', 'second\n').execute()
    expect(sweep.errors).toEqual([])
    expect(sweep.outcomes.map((o) => o.result)).toEqual(['pruned'])
    expect(readdirSync(join(dir, 'prod/app-migrate')).sort()).toEqual(['uid-first', 'uid-second'])
    for (const [uid, podName, log] of [
      ['uid-first', 'app-migrate-a1', 'first\n'],
      ['uid-second', 'app-migrate-b1', 'second\n']
    ]) {
      const file = JSON.parse(readFileSync(join(dir, 'prod/app-migrate', uid, 'job.json'), 'utf8')) as JobFile
      expect(file).toMatchObject({ name: 'app-migrate', uid, logs: [{ file: `${podName}/main.log` }] })
      expect(readFileSync(join(dir, 'prod/app-migrate', uid, podName, 'main.log'), 'utf8')).toBe(log)
    }
  })

  test('a succeeded Job (harvest-logs: all): a whole log, no Events read', async () => {
    const dir = tmp()
    const done = newJob({ name: 'app-seed', release: 'app', status: 'succeeded' })
    const ex = executorOf({ release: 'app', 'logs-dir': dir, 'harvest-logs': 'all' }, [done])
    ex.client.addPod(done, { ...pod(0), metadata: { name: 'app-seed-y1', uid: 'pod-uid-2' } }, { main: 'seeded\n' })
    const result = await ex.execute()
    expect(result.errors).toEqual([])
    const file = JSON.parse(readFileSync(join(dir, 'prod/app-seed/uid-app-seed/job.json'), 'utf8')) as JobFile
    expect(file).toMatchObject({ status: 'succeeded', logs: [{ file: 'app-seed-y1/main.log', bytes: 7, complete: true, logBytes: 7 }], failures: [] })
    expect(file.events).toBeUndefined()
    expect(file.failureReason).toBeUndefined()
    expect(ex.client.callsOf('listWarningEvents')).toEqual([])
  })

  test('a sink that cannot write: the logs and job.json are failures, and on-log-failure: keep keeps the Job (positive control: the same Job is pruned when the sink works)', async () => {
    const blocked = tmp()
    writeFileSync(join(blocked, 'prod'), 'a file where the namespace’s folder should be')
    const failed = newJob({ name: 'app-migrate', release: 'app', status: 'failed' })
    const ex = executorOf({ release: 'app', 'logs-dir': blocked }, [failed])
    ex.client.addPod(failed, pod(1), { main: 'ERROR\n' })
    const kept = await ex.execute()
    expect(kept.outcomes.map((o) => o.result)).toEqual(['error'])
    expect(kept.errors).toEqual([
      `Job prod/app-migrate was kept: its logs could not all be saved (cannot save the log of app-migrate-x1/main: cannot write ${join(blocked, 'prod/app-migrate/uid-app-migrate/app-migrate-x1/main.log')} (ENOTDIR) (and 1 more)); set on-log-failure: delete to delete it anyway`
    ])
    expect(kept.outcomes[0].logs?.failures[1]).toBe(
      `cannot save job.json: cannot write ${join(blocked, 'prod/app-migrate/uid-app-migrate/job.json')} (ENOTDIR)`
    )
    expect(ex.client.callsOf('deleteJob')).toEqual([])
    const works = executorOf({ release: 'app', 'logs-dir': tmp() }, [failed])
    works.client.addPod(failed, pod(1), { main: 'ERROR\n' })
    expect((await works.execute()).outcomes.map((o) => o.result)).toEqual(['pruned'])
  })
})
