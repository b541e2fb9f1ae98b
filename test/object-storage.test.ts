// The cluster's S3 server is a real store: versitygw on loopback, reached with the variables every
// test inherits (JOB_SWEEPER_S3_ENDPOINT, JOB_SWEEPER_S3_BUCKET and the AWS SDK's own AWS_REGION,
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), as job-sweeper's log upload will be. Bytes written come
// back byte for byte and lie in its directory; a streamed multipart upload is stored as one object
// of 5 MiB parts; a wrong secret or key is refused; a listing by prefix shows only that prefix.
// Its root secret is on no command line, record or log, and stopping the cluster stops it.
import { spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { DeleteObjectsCommand, ListObjectsV2Command, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { s3BinDir, stopCluster } from './cluster/cluster.ts'
import { recordedPid } from './cluster/processes.ts'
import { S3_SERVER, s3Env, s3EnvScript, startS3Server } from './cluster/s3.ts'
import { testCluster } from './cluster/testenv.ts'
import { keysUnder, objectBytes } from './s3-objects.ts'

const MiB = 1024 * 1024
const endpoint = process.env.JOB_SWEEPER_S3_ENDPOINT ?? ''
const Bucket = process.env.JOB_SWEEPER_S3_BUCKET ?? ''
/** This suite's prefix: the bucket is shared with every other suite of the run. */
const prefix = `object-storage-${randomBytes(4).toString('hex')}/`

const clients: S3Client[] = []
/** A client configured as a user of the SDK would: the endpoint, path-style; region and credentials from the environment. */
function s3(config: Partial<S3ClientConfig> = {}): S3Client {
  const client = new S3Client({ endpoint, forcePathStyle: true, maxAttempts: 1, ...config })
  clients.push(client)
  return client
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex')

afterAll(async () => {
  const client = s3()
  for (const p of [prefix, prefix.replace(/\/$/, '-decoy/')]) {
    const keys = await keysUnder(client, Bucket, p)
    if (keys.length > 0) await client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys.map((Key) => ({ Key })) } }))
  }
  for (const c of clients) c.destroy()
})

test('the environment names versitygw on loopback, which refuses an unsigned request', async () => {
  expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
  expect(Bucket).toBe(testCluster().s3.bucket)
  expect(process.env.AWS_REGION).toBe('us-east-1')
  for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']) expect(process.env[name]?.length ?? 0).toBeGreaterThanOrEqual(20)
  const anonymous = await fetch(`${endpoint}/${Bucket}`)
  await anonymous.text()
  expect(anonymous.status).toBe(403)
  expect(anonymous.headers.get('server')).toBe('VERSITYGW')
})

test('PutObject then GetObject: the same bytes, stored as a file in the server directory', async () => {
  const client = s3()
  const Key = `${prefix}small/pod.log`
  const body = Buffer.from(`line 1\nline 2 ${randomBytes(8).toString('hex')}\n`)
  await client.send(new PutObjectCommand({ Bucket, Key, Body: body, ContentType: 'text/plain' }))
  expect((await objectBytes(client, Bucket, Key)).equals(body)).toBe(true)
  expect(readFileSync(join(testCluster().s3.dataDir, Bucket, Key)).equals(body)).toBe(true)
})

test('a 20 MiB stream of unknown length, uploaded in 5 MiB parts, reads back byte for byte as one object', async () => {
  const client = s3()
  const Key = `${prefix}large/pod.log`
  const data = randomBytes(20 * MiB)
  // 64 KiB chunks of a stream with no length, as a pod's log arrives: Upload cuts the parts itself.
  const chunks = Array.from({ length: data.length / (64 * 1024) }, (_, i) => data.subarray(i * 64 * 1024, (i + 1) * 64 * 1024))
  const upload = new Upload({ client, params: { Bucket, Key, Body: Readable.from(chunks) }, partSize: 5 * MiB, queueSize: 2 })
  const parts = new Set<number>()
  upload.on('httpUploadProgress', (p) => p.part && parts.add(p.part))
  const done = await upload.done()
  expect([...parts].sort()).toEqual([1, 2, 3, 4])
  // A multipart object's ETag is the MD5 of its parts' MD5s, followed by their count.
  expect(done.ETag).toMatch(/^"[0-9a-f]{32}-4"$/)
  const back = await objectBytes(client, Bucket, Key)
  expect(back.length).toBe(data.length)
  expect(sha256(back)).toBe(sha256(data))
  expect(back.equals(data)).toBe(true)
  expect(statSync(join(testCluster().s3.dataDir, Bucket, Key)).size).toBe(20 * MiB)
})

test('a wrong secret is refused (SignatureDoesNotMatch), and so is an unknown access key (InvalidAccessKeyId)', async () => {
  const accessKeyId = process.env.AWS_ACCESS_KEY_ID ?? ''
  const secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY ?? ''
  const refusal = async (credentials: { accessKeyId: string; secretAccessKey: string }): Promise<{ name: string; status?: number }> => {
    const e = await s3({ credentials })
      .send(new PutObjectCommand({ Bucket, Key: `${prefix}refused.log`, Body: 'x' }))
      .then(() => new Error('accepted'))
      .catch((e: Error & { $metadata?: { httpStatusCode?: number } }) => e)
    return { name: e.name, status: (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode }
  }
  const wrongSecret = randomBytes(30).toString('base64url')
  expect(wrongSecret === secretAccessKey).toBe(false)
  expect(await refusal({ accessKeyId, secretAccessKey: wrongSecret })).toEqual({ name: 'SignatureDoesNotMatch', status: 403 })
  expect(await refusal({ accessKeyId: 'AKIANOSUCHKEY0000000', secretAccessKey })).toEqual({ name: 'InvalidAccessKeyId', status: 403 })
  // Nothing was written by either.
  expect(await keysUnder(s3(), Bucket, `${prefix}refused.log`)).toEqual([])
})

test('listing by prefix shows exactly what was written under it, not a neighbour sharing its first characters', async () => {
  const client = s3()
  const mine = ['listing/a.log', 'listing/b/c.log', 'listing/d.log'].map((k) => `${prefix}${k}`)
  const decoy = `${prefix.replace(/\/$/, '-decoy/')}listing/a.log`
  for (const Key of [...mine, decoy]) await client.send(new PutObjectCommand({ Bucket, Key, Body: Key }))
  expect(await keysUnder(client, Bucket, `${prefix}listing/`)).toEqual([...mine].sort())
  const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: `${prefix}listing/`, Delimiter: '/' }))
  expect((page.Contents ?? []).map((o) => o.Key).sort()).toEqual([mine[0], mine[2]])
  expect((page.CommonPrefixes ?? []).map((p) => p.Prefix)).toEqual([`${prefix}listing/b/`])
  expect(await keysUnder(client, Bucket, prefix.replace(/\/$/, '-decoy/'))).toEqual([decoy])
})

/** Processes whose command line names `dir`: a cluster's processes all do. */
function processesIn(dir: string): { pid: number; cmdline: string }[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .flatMap((p) => {
      try {
        return [{ pid: Number(p), cmdline: readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').join(' ') }]
      } catch {
        return [] // gone meanwhile
      }
    })
    .filter((p) => p.cmdline.includes(dir))
}

test('its root secret reaches versitygw by the environment only, and stopping the cluster leaves no versitygw running', async () => {
  // A server of its own, started and stopped by the same functions as every cluster's: the stop is
  // the one cluster:down and a private cluster's global teardown run.
  const dir = mkdtempSync(join(tmpdir(), 'job-sweeper-s3-'))
  try {
    const server = await startS3Server(dir, s3BinDir())
    const pid = recordedPid(dir, S3_SERVER)
    const secret = s3Env(server).AWS_SECRET_ACCESS_KEY
    const running = processesIn(dir)
    expect(running.map((p) => p.pid)).toEqual([pid])
    expect(running[0].cmdline).toMatch(/\/versitygw --port=127\.0\.0\.1:\d+ --region=us-east-1 --iam-dir=\S+ posix /)
    expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`ROOT_SECRET_KEY=${secret}`)).toBe(true)
    const holds = (text: string): boolean => text.includes(secret)
    expect(holds(running[0].cmdline)).toBe(false)
    expect(holds(readFileSync(join(dir, 'commands', `${S3_SERVER}.json`), 'utf8'))).toBe(false)
    expect(holds(readFileSync(join(dir, 'logs', `${S3_SERVER}.log`), 'utf8'))).toBe(false)
    expect(holds(JSON.stringify(server))).toBe(false)
    expect(statSync(server.secretKeyFile).mode & 0o077).toBe(0)
    // .cluster/env reads the credentials from their files when sourced: it holds none itself.
    const script = s3EnvScript(server)
    expect(holds(script)).toBe(false)
    const sourced = spawnSync('bash', ['-c', `${script}\nprintf %s "$AWS_SECRET_ACCESS_KEY"`], { encoding: 'utf8' })
    expect(sourced.stdout === secret).toBe(true)

    expect(await stopCluster(dir)).toEqual([S3_SERVER])
    expect(processesIn(dir)).toEqual([])
    expect(existsSync(join(dir, 'pids', S3_SERVER))).toBe(false)
  } finally {
    await stopCluster(dir)
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the cluster of this run has its versitygw running (global teardown or cluster:down stops it with the rest)', () => {
  const { dir } = testCluster()
  const pid = recordedPid(dir, S3_SERVER)
  expect(processesIn(dir).some((p) => p.pid === pid && p.cmdline.includes('/versitygw '))).toBe(true)
})
