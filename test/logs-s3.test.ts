// logs-dir: s3://bucket/prefix, against the cluster's real S3 server (versitygw on loopback: the
// environment's JOB_SWEEPER_S3_ENDPOINT and JOB_SWEEPER_S3_BUCKET, with the AWS SDK's AWS_REGION,
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), never a mock of the SDK. The action (its bundle)
// is given the endpoint as a user would, in the SDK's own AWS_ENDPOINT_URL_S3:
// - pre saves a failed Job's log and job.json in the bucket, the log byte for byte what kubectl
//   logs prints, and deletes the Job only then; the logs-dir output is the bucket's URL; post and
//   the CLI's sweep save the same way;
// - a store that refuses (a wrong secret: 403) or does not answer (a closed loopback port: the
//   SDK's bounded retries) keeps the Job as on-log-failure: keep says, the error naming the input
//   and the bucket and never a secret; on-log-failure: delete deletes it with a warning;
// - a 20 MiB log is a multipart upload read back byte for byte, and a read that breaks after a
//   part was sent leaves no object and no unfinished upload;
// - a store that answers 500 is retried, then fails naming the input; a store that goes away in
//   the middle of a multipart upload leaves no object under the key.
// Decoys survive every test (useScenario).
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import { AbortMultipartUploadCommand, DeleteObjectsCommand, HeadObjectCommand, ListMultipartUploadsCommand, S3Client } from '@aws-sdk/client-s3'
import { streamLog } from '../src/kube/log-stream.ts'
import { logsTargetOf } from '../src/settings/logs-dir.ts'
import { S3Sink } from '../src/store/s3-sink.ts'
import type { JobFile } from '../src/execute/job-file.ts'
import { outputNames, runAction, type ActionRun } from './action.ts'
import { runCli } from './bin.ts'
import { coreApi, createJob, getJob, testCluster, waitForJobCondition } from './cluster/testenv.ts'
import { expectNoStackTrace } from './faults/product.ts'
import { keysUnder, objectBytes } from './s3-objects.ts'
import { startStoreProxy, type StoreProxy } from './s3-store-proxy.ts'
import { release, releaseAnnotations, useScenario } from './scenario.ts'

const MiB = 1024 * 1024
const endpoint = process.env.JOB_SWEEPER_S3_ENDPOINT ?? ''
const Bucket = process.env.JOB_SWEEPER_S3_BUCKET ?? ''
/** This suite's prefix in the shared bucket. */
const prefix = `logs-s3-${randomBytes(4).toString('hex')}`
const secret = process.env.AWS_SECRET_ACCESS_KEY ?? ''

const scenario = useScenario('logs-s3')
const client = new S3Client({ endpoint, forcePathStyle: true, maxAttempts: 1 })

/** The S3 environment a user's workflow gives the step: the SDK's own variables, the endpoint in AWS_ENDPOINT_URL_S3. */
const s3Env = (overrides: Record<string, string> = {}): Record<string, string> => ({
  AWS_ENDPOINT_URL_S3: endpoint,
  AWS_REGION: process.env.AWS_REGION ?? '',
  AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? '',
  AWS_SECRET_ACCESS_KEY: secret,
  ...overrides
})

afterAll(async () => {
  const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket, Prefix: `${prefix}/` }))
  for (const { Key, UploadId } of uploads.Uploads ?? []) await client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }))
  const keys = await keysUnder(client, Bucket, `${prefix}/`)
  for (let i = 0; i < keys.length; i += 1000)
    await client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })) } }))
  client.destroy()
})

/** A failed Job of the release, run to its end; its pod's name, and its log as `kubectl logs` prints it (bytes). */
async function failedReleaseJob(ns: string, name: string): Promise<{ pod: string; uid: string; kubectlLog: Buffer }> {
  const job = await createJob({ namespace: ns, name, behaviour: 'fail', annotations: releaseAnnotations(ns) })
  await waitForJobCondition(ns, name, 'Failed')
  const pods = await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/controller-uid=${job.metadata?.uid}` })
  const pod = pods.items[0].metadata?.name ?? ''
  const cluster = testCluster()
  const printed = spawnSync('kubectl', ['logs', '-n', ns, pod, '-c', 'main'], {
    env: { ...process.env, KUBECONFIG: cluster.kubeconfig, PATH: `${cluster.binDir}:${process.env.PATH}` }
  })
  expect(printed.status).toBe(0)
  return { pod, uid: job.metadata?.uid ?? '', kubectlLog: printed.stdout }
}

/** Everything the run printed or wrote on the runner, for a secret to be looked for in. */
function everythingShown(run: ActionRun): string {
  const reportDir = run.outputs['report-file'] ? join(run.outputs['report-file'], '..') : undefined
  const files = reportDir ? readdirSync(reportDir).map((f) => readFileSync(join(reportDir, f), 'utf8')) : []
  return [run.stdout, run.stderr, run.summary, JSON.stringify(run.outputs), ...files].join('\n')
}

const errorLines = (run: ActionRun): string[] => run.stdout.split('\n').filter((l) => l.startsWith('::error::'))

test('pre with logs-dir s3://bucket/prefix: the failed Job’s log (byte for byte what kubectl logs prints) and its job.json are in the bucket, then the Job is deleted', async () => {
  const ns = scenario.ns
  const name = `${release}-migrate`
  const { pod, uid, kubectlLog } = await failedReleaseJob(ns, name)
  const url = `s3://${Bucket}/${prefix}/pre`
  const run = await runAction({ release, namespace: ns, 'logs-dir': url }, { env: s3Env() })
  expectNoStackTrace(run)
  expect({ code: run.code, errors: errorLines(run) }).toEqual({ code: 0, errors: [] })
  expect(outputNames(run, 'pruned')).toEqual([name])
  expect(await getJob(ns, name)).toBeUndefined()
  expect(run.outputs['logs-dir']).toBe(url)
  // The object layout is the disk layout, under the prefix (the Job's uid under its name): the log, and job.json beside the pod's folder.
  const jobPrefix = `${prefix}/pre/${ns}/${name}/${uid}`
  expect(await keysUnder(client, Bucket, `${prefix}/pre/`)).toEqual([`${jobPrefix}/${pod}/main.log`, `${jobPrefix}/job.json`])
  const log = await objectBytes(client, Bucket, `${jobPrefix}/${pod}/main.log`)
  expect(log.length).toBeGreaterThan(0)
  expect(log.equals(kubectlLog)).toBe(true)
  const head = await client.send(new HeadObjectCommand({ Bucket, Key: `${jobPrefix}/${pod}/main.log` }))
  expect(head.ContentType).toBe('text/plain; charset=utf-8')
  const file = JSON.parse((await objectBytes(client, Bucket, `${jobPrefix}/job.json`)).toString('utf8')) as JobFile
  expect(file).toMatchObject({
    format: 'job-sweeper.io/job/v1',
    namespace: ns,
    name,
    uid,
    savedBy: { phase: 'pre' },
    status: 'failed',
    failureReason: expect.stringContaining(`pod ${pod}: container main exit code 1`),
    logs: [{ file: `${pod}/main.log`, bytes: kubectlLog.length, complete: true, logBytes: kubectlLog.length }],
    failures: []
  })
  // The summary's last lines come from the log as it was uploaded (nothing is read back).
  expect(run.summary).toContain(`Last lines of failed Job ${name}`)
  expect(run.summary).toContain('migrate: ERROR: relation &quot;tuples&quot; already exists')
  // The report file stays on the runner; no log was written there.
  expect(readdirSync(join(run.outputs['report-file'], '..'))).toEqual(['job-sweeper-pre.json'])
  expect(everythingShown(run)).not.toContain(secret)
})

test('post and the CLI’s sweep save to the bucket as pre does: post before the failed Job’s TTL is set, the sweep before it deletes it', async () => {
  const ns = scenario.ns
  const name = `${release}-migrate`
  const { pod, uid, kubectlLog } = await failedReleaseJob(ns, name)
  const url = `s3://${Bucket}/${prefix}/post-sweep`
  const post = await runAction({ phase: 'post', release, namespace: ns, 'failure-grace': '1h', 'logs-dir': url }, { env: s3Env() })
  expectNoStackTrace(post)
  expect({ code: post.code, errors: errorLines(post) }).toEqual({ code: 0, errors: [] })
  expect(outputNames(post, 'ttl-set')).toEqual([name])
  const key = `${prefix}/post-sweep/${ns}/${name}/${uid}/${pod}/main.log`
  expect((await objectBytes(client, Bucket, key)).equals(kubectlLog)).toBe(true)
  const postFile = JSON.parse((await objectBytes(client, Bucket, `${prefix}/post-sweep/${ns}/${name}/${uid}/job.json`)).toString('utf8')) as JobFile
  expect(postFile.savedBy.phase).toBe('post')
  // The sweep (the CLI) finds a failed Job post did not manage past a failure-grace of 0s, saves its
  // log, then deletes it; the one post gave a TTL waits for it.
  const seed = `${release}-seed`
  const other = await failedReleaseJob(ns, seed)
  const sweep = await runCli(['sweep', '--namespace', ns, '--release', release, '--failure-grace', '0s', '--logs-dir', url, '--json'], s3Env())
  expect(sweep.stderr).not.toContain(secret)
  expect(sweep.code).toBe(0)
  const json = JSON.parse(sweep.stdout) as { pruned: { name: string }[]; 'logs-dir': string }
  expect(json.pruned.map((j) => j.name)).toEqual([seed])
  expect(json['logs-dir']).toBe(url)
  expect(sweep.stdout).not.toContain(secret)
  expect((await objectBytes(client, Bucket, `${prefix}/post-sweep/${ns}/${seed}/${other.uid}/${other.pod}/main.log`)).equals(other.kubectlLog)).toBe(true)
  const sweepFile = JSON.parse((await objectBytes(client, Bucket, `${prefix}/post-sweep/${ns}/${seed}/${other.uid}/job.json`)).toString('utf8')) as JobFile
  expect(sweepFile.savedBy.phase).toBe('sweep')
  expect(await getJob(ns, seed)).toBeUndefined()
  expect(await getJob(ns, name)).toBeDefined()
})

test('a store that refuses (a wrong secret: 403): the Job is kept and the step fails naming logs-dir and the bucket, never a secret; nothing is left in the bucket', async () => {
  const ns = scenario.ns
  const name = `${release}-migrate`
  const { pod } = await failedReleaseJob(ns, name)
  const url = `s3://${Bucket}/${prefix}/refused`
  const wrong = randomBytes(30).toString('base64url')
  const run = await runAction({ release, namespace: ns, 'logs-dir': url }, { env: s3Env({ AWS_SECRET_ACCESS_KEY: wrong }) })
  expectNoStackTrace(run)
  expect(run.code).toBe(1)
  expect(outputNames(run, 'pruned')).toEqual([])
  expect(await getJob(ns, name)).toBeDefined()
  const [error] = errorLines(run)
  expect(error).toContain(`Job ${ns}/${name} was kept: its logs could not all be saved (cannot save the log of ${pod}/main: logs-dir '${url}': cannot upload`)
  expect(error).toContain(`to bucket '${Bucket}': 403 SignatureDoesNotMatch`)
  expect(error).toContain('set on-log-failure: delete to delete it anyway')
  for (const s of [wrong, secret]) expect(everythingShown(run)).not.toContain(s)
  expect(await keysUnder(client, Bucket, `${prefix}/refused/`)).toEqual([])
})

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

test('a store that does not answer (a closed loopback port): the SDK’s bounded retries, then on-log-failure: keep keeps the Job, and delete deletes it with a warning', async () => {
  const ns = scenario.ns
  const name = `${release}-migrate`
  await failedReleaseJob(ns, name)
  const port = await closedPort()
  const url = `s3://${Bucket}/${prefix}/unanswered`
  const env = s3Env({ AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}` })
  const started = Date.now()
  const kept = await runAction({ release, namespace: ns, 'logs-dir': url }, { env })
  expect(Date.now() - started).toBeLessThan(60_000)
  expectNoStackTrace(kept)
  expect(kept.code).toBe(1)
  expect(await getJob(ns, name)).toBeDefined()
  const [error] = errorLines(kept)
  expect(error).toContain(`Job ${ns}/${name} was kept: its logs could not all be saved`)
  expect(error).toContain(`logs-dir '${url}': cannot upload`)
  expect(error).toMatch(/ECONNREFUSED.*\(after 3 attempts\)/)
  expect(everythingShown(kept)).not.toContain(secret)
  // The same store, the other policy: the Job goes, and the step warns saying why.
  const deleted = await runAction({ release, namespace: ns, 'logs-dir': url, 'on-log-failure': 'delete' }, { env })
  expectNoStackTrace(deleted)
  expect(deleted.code).toBe(0)
  expect(outputNames(deleted, 'pruned')).toEqual([name])
  expect(deleted.stdout).toMatch(
    new RegExp(`::warning::logs of Job ${ns}/${name} could not all be saved \\(on-log-failure: delete, so it goes on\\): .*ECONNREFUSED`)
  )
})

test('the s3-endpoint input names the store, before the SDK’s own variable (here a closed port, which would fail)', async () => {
  const ns = scenario.ns
  const name = `${release}-migrate`
  const { pod, uid, kubectlLog } = await failedReleaseJob(ns, name)
  const url = `s3://${Bucket}/${prefix}/endpoint-input`
  const env = s3Env({ AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${await closedPort()}` })
  const run = await runAction({ release, namespace: ns, 'logs-dir': url, 's3-endpoint': endpoint }, { env })
  expectNoStackTrace(run)
  expect({ code: run.code, errors: errorLines(run) }).toEqual({ code: 0, errors: [] })
  expect(outputNames(run, 'pruned')).toEqual([name])
  const key = `${prefix}/endpoint-input/${ns}/${name}/${uid}/${pod}/main.log`
  expect((await objectBytes(client, Bucket, key)).equals(kubectlLog)).toBe(true)
})

describe('large logs, streamed into the bucket', () => {
  // kwok, the test cluster's node, serves one short log for every pod (test/cluster/pod.log), so a
  // 20 MiB log is served here by the stream's own reader: the sink and the store are the real ones.
  const read = { namespace: 'prod', pod: 'p', container: 'main', previous: false, stallMs: 30_000 }
  let saved: string | undefined
  let sink: S3Sink
  beforeAll(() => {
    // The SDK reads its endpoint from the environment, as it does in the action.
    saved = process.env.AWS_ENDPOINT_URL_S3
    process.env.AWS_ENDPOINT_URL_S3 = endpoint
    const target = logsTargetOf(`s3://${Bucket}/${prefix}/large`, process.env)
    if (target.kind !== 's3') throw new Error('expected a bucket')
    sink = new S3Sink(target)
  })
  afterAll(async () => {
    await sink.close()
    if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_S3
    else process.env.AWS_ENDPOINT_URL_S3 = saved
  })

  test('a 20 MiB log is a multipart upload of 5 MiB parts, read back byte for byte', async () => {
    const data = randomBytes(20 * MiB)
    const chunks = Array.from({ length: 20 * 16 }, (_, i) => data.subarray(i * 64 * 1024, (i + 1) * 64 * 1024))
    const result = await streamLog(
      async () => Readable.from(chunks),
      read,
      { maxBytes: 32 * MiB, lastLines: 0 },
      () => sink.open('ns/job/pod/main.log', 'text/plain'),
      () => undefined
    )
    expect(result).toMatchObject({ bytes: 20 * MiB, truncated: false, logBytes: 20 * MiB })
    const Key = `${prefix}/large/ns/job/pod/main.log`
    const head = await client.send(new HeadObjectCommand({ Bucket, Key }))
    // A multipart object's ETag is the MD5 of its parts' MD5s, followed by their count.
    expect(head.ETag).toMatch(/^"[0-9a-f]{32}-4"$/)
    expect((await objectBytes(client, Bucket, Key)).equals(data)).toBe(true)
  })

  test('a read that breaks after a part was uploaded leaves no object and no unfinished upload (positive control: the same read whole is stored)', async () => {
    const Key = `${prefix}/large/ns/job/pod/broken.log`
    const body = new PassThrough()
    let sent = 0
    const feed = setInterval(() => {
      if (sent < 12 * MiB) {
        body.write(randomBytes(MiB))
        sent += MiB
      } else {
        clearInterval(feed)
        body.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))
      }
    }, 20)
    await expect(
      streamLog(
        async () => body,
        read,
        { maxBytes: 32 * MiB, lastLines: 0 },
        () => sink.open('ns/job/pod/broken.log', 'text/plain'),
        () => undefined
      )
    ).rejects.toMatchObject({
      code: 'ECONNRESET'
    })
    expect(await keysUnder(client, Bucket, Key)).toEqual([])
    const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket, Prefix: Key }))
    expect(uploads.Uploads ?? []).toEqual([])
    // The control: whole, the same stream is stored.
    await streamLog(
      async () => Readable.from([randomBytes(12 * MiB)]),
      read,
      { maxBytes: 32 * MiB, lastLines: 0 },
      () => sink.open('ns/job/pod/broken.log', 'text/plain'),
      () => undefined
    )
    expect(await keysUnder(client, Bucket, Key)).toEqual([Key])
  })
})

describe('a store in trouble (a pass-through in front of the S3 server: test/s3-store-proxy.ts)', () => {
  const read = { namespace: 'prod', pod: 'p', container: 'main', previous: false, stallMs: 30_000 }
  let proxy: StoreProxy
  let sink: S3Sink
  let saved: string | undefined
  beforeAll(async () => {
    proxy = await startStoreProxy(endpoint)
    // The SDK reads its endpoint from the environment, as it does in the action: the proxy's.
    saved = process.env.AWS_ENDPOINT_URL_S3
    process.env.AWS_ENDPOINT_URL_S3 = proxy.url
    const target = logsTargetOf(`s3://${Bucket}/${prefix}/trouble`, process.env)
    if (target.kind !== 's3') throw new Error('expected a bucket')
    sink = new S3Sink(target)
  })
  afterAll(async () => {
    await sink.close()
    await proxy.close()
    if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_S3
    else process.env.AWS_ENDPOINT_URL_S3 = saved
  })
  beforeEach(() => {
    proxy.mode = 'pass'
    proxy.onRequest = undefined
    proxy.seen.length = 0
  })
  const save = (key: string, body: () => Readable): Promise<unknown> =>
    streamLog(
      async () => body(),
      read,
      { maxBytes: 32 * MiB, lastLines: 0 },
      () => sink.open(key, 'text/plain'),
      () => undefined
    )

  test('500 InternalError to every request: retried 3 times, then a failure in S3’s words naming logs-dir and the bucket; nothing stored (positive control: passed through, the same log is)', async () => {
    proxy.mode = 'error-500'
    const key = 'ns/job/pod/error-500.log'
    await expect(save(key, () => Readable.from([Buffer.from('migrating…\n')]))).rejects.toThrow(
      `logs-dir 's3://${Bucket}/${prefix}/trouble': cannot upload ${prefix}/trouble/${key} to bucket '${Bucket}': 500 InternalError`
    )
    expect(proxy.seen.filter((r) => r.startsWith('PUT '))).toHaveLength(3)
    expect(await keysUnder(client, Bucket, `${prefix}/trouble/${key}`)).toEqual([])
    proxy.mode = 'pass'
    await save(key, () => Readable.from([Buffer.from('migrating…\n')]))
    expect((await objectBytes(client, Bucket, `${prefix}/trouble/${key}`)).toString()).toBe('migrating…\n')
  })

  test('the store goes away after the first part of a 12 MiB upload: a failure, and no object under the key (its unfinished upload is the bucket’s lifecycle rule’s to end)', async () => {
    const key = 'ns/job/pod/gone.log'
    proxy.onRequest = (seen) => {
      // The first part went through: from the second on, the store is gone.
      if (seen.filter((r) => r.includes('partNumber=')).length >= 2) proxy.mode = 'gone'
    }
    await expect(save(key, () => Readable.from([randomBytes(12 * MiB)]))).rejects.toThrow(`cannot upload ${prefix}/trouble/${key} to bucket '${Bucket}'`)
    expect(proxy.seen.some((r) => r.endsWith('?uploads'))).toBe(true)
    expect(await keysUnder(client, Bucket, `${prefix}/trouble/${key}`)).toEqual([])
  })
})
