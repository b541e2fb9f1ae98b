// Bounded work per Job (issue 34 item 14): a Job of many pods has its logs read a few at a time,
// not one after the other (a worker held for the sum of its reads) nor all at once; the results
// keep the pods' order; an unreachable cluster starts no more reads. Over the fake client.
import { mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { V1Job, V1Pod } from '@kubernetes/client-node'
import { harvestLogs, LOG_READS_PER_JOB } from '../../src/execute/logs.ts'
import { DiskSink } from '../../src/store/disk-sink.ts'
import { FakeClock } from '../fake/clock.ts'
import { FakeJobsClient, unreachable, type Step } from '../fake/jobs-client.ts'
import { newJob, NOW } from './jobs.ts'

const PODS = 20
const keep = { maxBytes: 1 << 20, lastLines: 0 }

const failedPod = (name: string): V1Pod => ({
  metadata: { name },
  spec: { containers: [{ name: 'main', image: 'x' }] },
  status: {
    phase: 'Failed',
    containerStatuses: [{ name: 'main', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 1 } } }]
  }
})

function manyPods(): { client: FakeJobsClient; job: V1Job; sink: DiskSink; dir: string } {
  const client = new FakeJobsClient(new FakeClock(NOW))
  const job = client.create(newJob({ name: 'app-migrate', status: 'failed' }))
  for (let i = 0; i < PODS; i++) client.addPod(job, failedPod(`app-migrate-${String(i).padStart(2, '0')}`), { main: `run ${i}\n` })
  const dir = mkdtempSync(join(tmpdir(), 'logs-bounded-'))
  return { client, job, sink: new DiskSink(dir), dir }
}

/** A read that stays in flight until `release` is called, counting how many are in flight at once. */
function gate(): { step: Step; inFlight: () => number; most: () => number; release: () => void; started: () => number } {
  let inFlight = 0
  let most = 0
  let started = 0
  const waiting: (() => void)[] = []
  let open = false
  const step: Step = async (proceed) => {
    started++
    inFlight++
    most = Math.max(most, inFlight)
    if (!open) await new Promise<void>((resolve) => waiting.push(resolve))
    try {
      return await proceed()
    } finally {
      inFlight--
    }
  }
  return {
    step,
    inFlight: () => inFlight,
    most: () => most,
    started: () => started,
    release: () => {
      open = true
      for (const w of waiting.splice(0)) w()
    }
  }
}

const source = (job: V1Job): { namespace: string; name: string; uid: string } => ({
  namespace: 'prod',
  name: 'app-migrate',
  uid: job.metadata?.uid ?? ''
})

test(`a Job of ${PODS} pods: its logs read ${LOG_READS_PER_JOB} at a time, every one saved, in the pods' order`, async () => {
  const { client, job, sink, dir } = manyPods()
  const reads = gate()
  client.every('saveLog', reads.step)
  const harvesting = harvestLogs(client, source(job), sink, keep)
  // The reads that started wait for their release: awaited (a bounded number of turns) until the lanes are all busy.
  for (let turn = 0; turn < 100 && reads.started() < LOG_READS_PER_JOB; turn++) await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setImmediate(resolve))
  expect(reads.inFlight()).toBe(LOG_READS_PER_JOB) // more than one at once, and no more than the bound
  reads.release()
  const { logs } = await harvesting
  expect(reads.most()).toBe(LOG_READS_PER_JOB)
  expect(logs.failures).toEqual([])
  const names = Array.from({ length: PODS }, (_, i) => `app-migrate-${String(i).padStart(2, '0')}`)
  expect(logs.files.map((f) => f.file)).toEqual(names.map((n) => `prod/app-migrate/${job.metadata?.uid}/${n}/main.log`))
  expect(client.savedLogs).toHaveLength(PODS)
  expect(readdirSync(join(dir, 'prod/app-migrate', job.metadata?.uid ?? '')).sort()).toEqual(names)
})

test('the cluster unreachable during one read: no more reads start, and the harvest fails with it', async () => {
  const { client, job, sink } = manyPods()
  const down = unreachable('read the log of prod/app-migrate-00/main')
  client.script('saveLog', () => Promise.reject(down))
  await expect(harvestLogs(client, source(job), sink, keep)).rejects.toBe(down)
  // The first read failed; only the reads already started in the other lanes were made.
  expect(client.callsOf('saveLog').length).toBeLessThanOrEqual(LOG_READS_PER_JOB)
})
