// Saving logs, without a cluster: which containers have a log (only those that ran), what a read
// that fails says (the API server's own message), and that a read failing before its first byte
// (a stall, a file that cannot be opened) is a failed read, never an unhandled rejection.
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import { jest } from '@jest/globals'
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node'
import { harvestLogs, podLogs } from '../../src/execute/logs.ts'
import { DiskSink } from '../../src/store/disk-sink.ts'
import type { JobsClient, LogKeep, LogTarget } from '../../src/kube/jobs-client.ts'
import { LogGone, streamLog, type LogQuery, type LogRead, type OpenLog } from '../../src/kube/log-stream.ts'
import { fileAt } from './log-targets.ts'
import { ApiError } from '../../src/kube/rest.ts'
import { buildReport } from '../../src/report/summary.ts'

const at = '2026-06-01T12:00:00Z'
const running: V1ContainerStatus['state'] = { running: { startedAt: new Date(at) } }
const exited = (exitCode: number): V1ContainerStatus['state'] => ({ terminated: { exitCode, reason: exitCode ? 'Error' : 'Completed' } })
const waiting = (reason: string): V1ContainerStatus['state'] => ({ waiting: { reason } })
const status = (name: string, state: V1ContainerStatus['state'], extra: Partial<V1ContainerStatus> = {}): V1ContainerStatus =>
  ({ name, image: 'x', imageID: '', ready: false, restartCount: 0, state, ...extra }) as V1ContainerStatus

function pod(name: string, init: V1ContainerStatus[], main: V1ContainerStatus[], phase = 'Failed', spec?: { init: string[]; main: string[] }): V1Pod {
  return {
    metadata: { name },
    spec: {
      initContainers: (spec?.init ?? init.map((s) => s.name)).map((n) => ({ name: n })),
      containers: (spec?.main ?? main.map((s) => s.name)).map((n) => ({ name: n }))
    },
    status: { phase, initContainerStatuses: init, containerStatuses: main }
  }
}

describe('only containers that ran have a log', () => {
  test.each([
    ['a container that ran to its end', pod('p', [], [status('main', exited(1))]), ['main'], []],
    ['a container running now', pod('p', [], [status('main', running)], 'Running'), ['main'], []],
    [
      'an init container failed: it ran, the main container waits PodInitializing and never ran',
      pod('p', [status('migrate-schema', exited(1))], [status('main', waiting('PodInitializing'))]),
      ['migrate-schema'],
      ['main (waiting: PodInitializing)']
    ],
    [
      'the first init container failed: the second never ran either',
      pod('p', [status('wait-for-db', exited(1)), status('seed', waiting('PodInitializing'))], [status('main', waiting('PodInitializing'))]),
      ['wait-for-db'],
      ['seed (waiting: PodInitializing)', 'main (waiting: PodInitializing)']
    ],
    ['a bad image tag', pod('p', [], [status('main', waiting('ImagePullBackOff'))], 'Pending'), [], ['main (waiting: ImagePullBackOff)']],
    ['a missing Secret', pod('p', [], [status('main', waiting('CreateContainerConfigError'))], 'Pending'), [], ['main (waiting: CreateContainerConfigError)']],
    [
      'a pod never scheduled (no container status at all)',
      pod('p', [], [], 'Pending', { init: [], main: ['main'] }),
      [],
      ['main (pod Pending, no container status)']
    ],
    [
      'a crash loop: waiting now, but it ran before (lastState, restartCount): both runs are read',
      pod('p', [], [status('main', waiting('CrashLoopBackOff'), { restartCount: 2, lastState: exited(1) })], 'Running'),
      ['main (previous)', 'main'],
      []
    ]
  ])('%s', (_, p, reads, neverRan) => {
    const logs = podLogs(p)
    expect(logs.reads.map((r) => `${r.container}${r.previous ? ' (previous)' : ''}`)).toEqual(reads)
    expect(logs.neverRan.map((n) => `${n.container} (${n.why})`)).toEqual(neverRan)
  })
})

/** A JobsClient with only what the harvest uses: the pods, and a saveLog that stores `log of <container>` or throws what `refuse` gives. */
function podsClient(pods: V1Pod[], refuse: (container: string) => unknown = () => undefined): { client: JobsClient; reads: string[] } {
  const reads: string[] = []
  const client = {
    listPodsOfJob: async () => pods,
    saveLog: async (_ns: string, podName: string, container: string, previous: boolean, _keep: LogKeep, open: () => Promise<LogTarget>) => {
      reads.push(`${podName}/${container}${previous ? ' (previous)' : ''}`)
      const refusal = refuse(container)
      if (refusal) throw refusal
      const text = `log of ${container}\n`
      await (await open()).write(Readable.from([Buffer.from(text)]))
      return { bytes: text.length, truncated: false, cutBytes: 0, logBytes: text.length, lastLines: [] }
    }
  } as unknown as JobsClient
  return { client, reads }
}

const job = { namespace: 'prod', name: 'app-migrate', uid: 'u1' }
const keep: LogKeep = { maxBytes: 1000, lastLines: 0 }
const initFailed = pod('app-migrate-x1', [status('migrate-schema', exited(1))], [status('main', waiting('PodInitializing'))])
// What kube-apiserver relays of the kubelet's refusal to read a container that never started.
const kubeletRefusal = (container: string): ApiError =>
  new ApiError(
    400,
    JSON.stringify({
      kind: 'Status',
      status: 'Failure',
      message: `container "${container}" in pod "app-migrate-x1" is waiting to start: PodInitializing`,
      reason: 'BadRequest',
      code: 400
    }),
    {},
    'GET /api/v1/namespaces/prod/pods/app-migrate-x1/log'
  )

describe('harvest', () => {
  test('a failed init container: its log is saved, the main container is noted as never ran, and nothing failed (a complete harvest)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logs-unit-'))
    const { client, reads } = podsClient([initFailed], (c) => (c === 'main' ? kubeletRefusal(c) : undefined))
    const { logs } = await harvestLogs(client, job, new DiskSink(dir), keep)
    expect(reads).toEqual(['app-migrate-x1/migrate-schema']) // the main container's log is never asked for
    expect(logs.failures).toEqual([])
    expect(logs.files.map((f) => f.file)).toEqual(['prod/app-migrate/u1/app-migrate-x1/migrate-schema.log'])
    expect(logs.neverRan).toEqual(['app-migrate-x1/main (waiting: PodInitializing)'])
    expect(readFileSync(join(dir, 'prod/app-migrate/u1/app-migrate-x1/main.never-ran.txt'), 'utf8')).toBe(
      'job-sweeper: container main of pod app-migrate-x1 never ran (waiting: PodInitializing), so it has no log.\n'
    )
    // The summary's Logs column says so too.
    const report = buildReport({
      phase: 'pre',
      namespace: 'prod',
      dryRun: false,
      errors: [],
      warnings: [],
      outcomes: [
        { namespace: 'prod', name: 'app-migrate', status: 'failed', ageSeconds: 9, action: 'delete', result: 'pruned', waited: false, reason: 'r', logs }
      ]
    })
    expect(report.markdown).toContain('<code>prod/app-migrate/u1/app-migrate-x1/migrate-schema.log (1 container(s) never ran)</code>')
  })

  test('a read the API server refuses keeps its message, not only the code (positive control: a container that ran, refused)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logs-unit-'))
    const ran = pod('app-migrate-x1', [], [status('main', exited(1))])
    const { client } = podsClient([ran], kubeletRefusal)
    const { logs } = await harvestLogs(client, job, new DiskSink(dir), keep)
    expect(logs.failures).toEqual([
      'cannot save the log of app-migrate-x1/main: 400 Bad Request: container "main" in pod "app-migrate-x1" is waiting to start: PodInitializing'
    ])
  })

  test('a previous run the kubelet no longer has (its 400 before 1.37): a gone note, not a failure; the same 400 for a current log is a failure (positive control)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logs-unit-'))
    const restarted = pod('app-seed-x1', [], [status('main', exited(0), { restartCount: 1 })], 'Succeeded')
    const notFound = (): ApiError =>
      new ApiError(400, JSON.stringify({ kind: 'Status', message: 'previous terminated container "main" in pod "app-seed-x1" not found' }), {}, 'GET x')
    let previousRead = true
    const client = {
      ...podsClient([restarted]).client,
      saveLog: async (_ns: string, _pod: string, _c: string, previous: boolean, _keep: LogKeep, open: () => Promise<LogTarget>) => {
        if (previous === previousRead) throw notFound()
        await (await open()).write(Readable.from([Buffer.from('done\n')]))
        return { bytes: 5, truncated: false, cutBytes: 0, logBytes: 5, lastLines: [] }
      }
    } as unknown as JobsClient
    const { logs } = await harvestLogs(client, job, new DiskSink(dir), keep)
    expect(logs.failures).toEqual([])
    expect(logs.gone).toEqual(['app-seed-x1/main (previous run)'])
    expect(logs.files.map((f) => f.file)).toEqual(['prod/app-migrate/u1/app-seed-x1/main.log'])
    expect(readFileSync(join(dir, 'prod/app-migrate/u1/app-seed-x1/main.previous.gone.txt'), 'utf8')).toContain(
      'The kubelet said: previous terminated container "main" in pod "app-seed-x1" not found'
    )

    previousRead = false
    const again = await harvestLogs(client, job, new DiskSink(mkdtempSync(join(tmpdir(), 'logs-unit-'))), keep)
    expect(again.logs.gone).toBeUndefined()
    expect(again.logs.failures).toEqual([
      'cannot save the log of app-seed-x1/main: 400 Bad Request: previous terminated container "main" in pod "app-seed-x1" not found'
    ])
  })

  test('a 403 keeps the server’s message and says which right is missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logs-unit-'))
    const forbidden = new ApiError(
      403,
      JSON.stringify({ kind: 'Status', message: 'pods "p" is forbidden: User "u" cannot get resource "pods/log"' }),
      {},
      'GET x'
    )
    const { client } = podsClient([pod('p', [], [status('main', exited(1))])], () => forbidden)
    const { logs } = await harvestLogs(client, job, new DiskSink(dir), keep)
    expect(logs.failures).toEqual([
      `cannot save the log of p/main: 403 Forbidden: pods "p" is forbidden: User "u" cannot get resource "pods/log" (the credentials lack 'get' on pods/log)`
    ])
  })
})

describe('a read that fails before its first byte is a failed read', () => {
  const read = (stallMs: number): LogRead => ({ namespace: 'prod', pod: 'p', container: 'main', previous: false, stallMs })
  const keep: LogKeep = { maxBytes: 100, lastLines: 0 }
  // jest fails a test during which a promise rejection goes unhandled: the old stream's did (its
  // file's pipeline rejected while the request was still awaited), and the process died of it.
  const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 50))

  test('the API server never answers: the stall watchdog fails the read, once, and nothing is left unhandled', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logs-unit-'))
    let signal: AbortSignal | undefined
    // A client that never answers and ignores the signal: the read ends all the same.
    const never: OpenLog = (_query, s) => {
      signal = s
      return new Promise<Readable>(() => undefined)
    }
    const started = jest.fn()
    await expect(streamLog(never, read(100), keep, fileAt(join(dir, 'main.log')), started)).rejects.toThrow('log stream sent nothing for 0.1s')
    await settle()
    expect(started).not.toHaveBeenCalled()
    expect(signal?.aborted).toBe(true) // the request is abandoned too
  })

  test('the answer starts, then stalls: the watchdog fails the read (positive control of the same watchdog)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logs-unit-'))
    const body = new PassThrough()
    body.write('first line\n')
    const started = jest.fn()
    await expect(streamLog(async () => body, read(100), keep, fileAt(join(dir, 'main.log')), started)).rejects.toThrow('log stream sent nothing for 0.1s')
    expect(started).toHaveBeenCalledTimes(1)
    await settle()
  })

  test('the file cannot be opened: the read fails with the file’s error, and no request is made', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logs-unit-'))
    const open = jest.fn<OpenLog>(async () => Readable.from(['a log\n']))
    // A directory where the file should be, and a folder that is not there.
    await expect(streamLog(open, read(10_000), keep, fileAt(dir), () => undefined)).rejects.toMatchObject({ code: 'EISDIR' })
    await expect(streamLog(open, read(10_000), keep, fileAt(join(dir, 'missing', 'main.log')), () => undefined)).rejects.toMatchObject({ code: 'ENOENT' })
    await settle()
    expect(open).not.toHaveBeenCalled()
  })

  test('a log that answers is saved whole up to the limit, and the whole log is asked for: its end is needed (positive control)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logs-unit-'))
    const asked: LogQuery[] = []
    const serve =
      (text: string): OpenLog =>
      async (query) => {
        asked.push(query)
        return Readable.from([Buffer.from(text)])
      }
    await expect(streamLog(serve('0123456789'), read(1000), { maxBytes: 10, lastLines: 0 }, fileAt(join(dir, 'whole.log')), () => undefined)).resolves.toEqual({
      bytes: 10,
      truncated: false,
      cutBytes: 0,
      logBytes: 10,
      lastLines: []
    })
    expect(readFileSync(join(dir, 'whole.log'), 'utf8')).toBe('0123456789')
    expect(asked.map((q) => q.limitBytes)).toEqual([undefined])
  })

  // What a real kubelet (test/real-node.test.ts) answers, with 200, for a finished pod's earlier run.
  const goneBody = 'unable to retrieve container logs for containerd://5671ff4d0bfc321dee4e05a38b33f92a2a1db7c776cb995cea80fe9ae6a20c7e'

  test('the kubelet’s answer for a container it removed is no log: LogGone, and nothing is saved', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logs-unit-'))
    // In two chunks, as a stream may cut it.
    const gone: OpenLog = async () => Readable.from([Buffer.from(goneBody.slice(0, 20)), Buffer.from(goneBody.slice(20))])
    await expect(streamLog(gone, read(1000), { maxBytes: 1000, lastLines: 0 }, fileAt(join(dir, 'main.previous.log')), () => undefined)).rejects.toThrow(
      LogGone
    )
    expect(readFileSync(join(dir, 'main.previous.log'), 'utf8')).toBe('') // this target opens its file first: nothing was written to it
  })

  test.each([
    ['the same line in a longer log', `${goneBody}\nmore\n`],
    ['the same line ending with a newline (the kubelet sends none)', `${goneBody}\n`],
    ['an ID that is not a container ID', goneBody.replace(/[0-9a-f]{64}$/, 'abc')],
    ['a short real log', 'done\n']
  ])('a log that only looks like it is saved whole (positive control): %s', async (_, text) => {
    const dir = mkdtempSync(join(tmpdir(), 'logs-unit-'))
    const serve: OpenLog = async () => Readable.from([Buffer.from(text)])
    await expect(streamLog(serve, read(1000), { maxBytes: 1000, lastLines: 0 }, fileAt(join(dir, 'main.log')), () => undefined)).resolves.toMatchObject({
      bytes: text.length
    })
    expect(readFileSync(join(dir, 'main.log'), 'utf8')).toBe(text)
  })
})
