// logs-dir: a directory, or s3://bucket/prefix, parsed once in the settings; anything else is
// refused there, naming the input, before the cluster is read. The endpoint of an S3-compatible
// store is the AWS SDK's own environment variable, checked here.
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defaultLogsDir } from '../../src/settings/logs-dir.ts'
import { parseSettings } from '../../src/settings/settings.ts'

const parse = (logsDir: string, env: NodeJS.ProcessEnv = {}) =>
  parseSettings(
    (name) => ({ release: 'app', 'logs-dir': logsDir })[name] ?? '',
    { RUNNER_TEMP: '/runner/tmp', HOME: '/home/u', ...env },
    {
      readText: () => '',
      exists: () => false
    }
  )

test.each([
  ['s3://bucket/prefix', { kind: 's3', url: 's3://bucket/prefix', bucket: 'bucket', prefix: 'prefix' }],
  ['s3://bucket', { kind: 's3', url: 's3://bucket', bucket: 'bucket', prefix: '' }],
  ['s3://bucket/', { kind: 's3', url: 's3://bucket', bucket: 'bucket', prefix: '' }],
  ['S3://my.logs-1/deploys//prod/', { kind: 's3', url: 's3://my.logs-1/deploys/prod', bucket: 'my.logs-1', prefix: 'deploys/prod' }],
  ['s3://gcs_interop_bucket/x', { kind: 's3', url: 's3://gcs_interop_bucket/x', bucket: 'gcs_interop_bucket', prefix: 'x' }],
  ['/var/logs', { kind: 'dir', dir: '/var/logs' }],
  ['~/logs', { kind: 'dir', dir: '/home/u/logs' }],
  ['logs/s3:/x', { kind: 'dir', dir: 'logs/s3:/x' }]
])('logs-dir %s', (given, target) => {
  const s = parse(given)
  expect(s.logsTarget).toEqual(target)
  // The report file stays on the runner when logs go to a bucket.
  expect(s.logsDir).toBe('dir' in target ? target.dir : '/runner/tmp/job-sweeper/logs')
})

test.each([
  ['gs://x', "Invalid logs-dir 'gs://x': expected a directory or s3://bucket/prefix"],
  ['https://bucket.s3.amazonaws.com/logs', "Invalid logs-dir 'https://bucket.s3.amazonaws.com/logs': expected a directory or s3://bucket/prefix"],
  ['file:///tmp/logs', "Invalid logs-dir 'file:///tmp/logs': expected a directory or s3://bucket/prefix"],
  ['s3://', "Invalid logs-dir 's3://': expected a directory or s3://bucket/prefix; it names no bucket"],
  ['s3:///prefix', "Invalid logs-dir 's3:///prefix': expected a directory or s3://bucket/prefix; it names no bucket"],
  ['s3://My_Bucket/x', "Invalid logs-dir 's3://My_Bucket/x': expected a directory or s3://bucket/prefix; 'My_Bucket' is no bucket name"],
  ['s3://ab', "Invalid logs-dir 's3://ab': expected a directory or s3://bucket/prefix; 'ab' is no bucket name"]
])('logs-dir %s is refused', (given, message) => {
  expect(() => parse(given)).toThrow(message)
})

test('the endpoint is the SDK’s AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL; none when the SDK is told to ignore them', () => {
  expect(parse('s3://bkt/p', { AWS_ENDPOINT_URL: 'http://127.0.0.1:7070' }).logsTarget).toMatchObject({ endpoint: 'http://127.0.0.1:7070' })
  expect(parse('s3://bkt/p', { AWS_ENDPOINT_URL: 'http://a:1', AWS_ENDPOINT_URL_S3: 'https://storage.googleapis.com' }).logsTarget).toMatchObject({
    endpoint: 'https://storage.googleapis.com'
  })
  expect(parse('s3://bkt/p', {}).logsTarget).toMatchObject({ endpoint: undefined })
  expect(parse('s3://bkt/p', { AWS_ENDPOINT_URL_S3: 'http://a:1', AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' }).logsTarget).toMatchObject({
    endpoint: undefined
  })
  // A directory does not look at them.
  expect(parse('/logs', { AWS_ENDPOINT_URL_S3: 'nonsense' }).logsTarget).toEqual({ kind: 'dir', dir: '/logs' })
})

test('an endpoint that is no http(s) URL is refused, naming the variable and the logs-dir', () => {
  expect(() => parse('s3://bkt/p', { AWS_ENDPOINT_URL_S3: 'localhost:9000' })).toThrow(
    "Invalid AWS_ENDPOINT_URL_S3 'localhost:9000' (the endpoint of logs-dir 's3://bkt/p'): expected a URL like https://storage.googleapis.com or http://127.0.0.1:7070"
  )
})

describe('s3-endpoint, the input', () => {
  const withEndpoint = (logsDir: string, endpoint: string, env: NodeJS.ProcessEnv = {}) =>
    parseSettings((name) => ({ release: 'app', 'logs-dir': logsDir, 's3-endpoint': endpoint })[name] ?? '', env, { readText: () => '', exists: () => false })

  test('it is the endpoint, before the SDK’s variables, and whatever AWS_IGNORE_CONFIGURED_ENDPOINT_URLS says of those', () => {
    const env = { AWS_ENDPOINT_URL_S3: 'http://a:1', AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' }
    expect(withEndpoint('s3://bkt/p', ' https://storage.googleapis.com ', env).logsTarget).toMatchObject({ endpoint: 'https://storage.googleapis.com' })
  })

  test.each([
    ['/logs', "Invalid s3-endpoint 'http://127.0.0.1:7070' with logs-dir '/logs': expected logs-dir s3://bucket/prefix, the bucket on that store"],
    ['', "Invalid s3-endpoint 'http://127.0.0.1:7070' with logs-dir '': expected logs-dir s3://bucket/prefix"]
  ])('without a bucket (logs-dir %j) it is refused', (logsDir, message) => {
    expect(() => withEndpoint(logsDir, 'http://127.0.0.1:7070')).toThrow(message)
  })

  test('one that is no http(s) URL is refused, naming the input', () => {
    expect(() => withEndpoint('s3://bkt/p', 'minio:9000')).toThrow(
      "Invalid s3-endpoint 'minio:9000' (the endpoint of logs-dir 's3://bkt/p'): expected a URL like https://storage.googleapis.com or http://127.0.0.1:7070"
    )
  })
})

test("the default: on a runner its temporary directory's job-sweeper/logs; elsewhere the system's temporary directory, in a folder of this user's own", () => {
  expect(defaultLogsDir({ RUNNER_TEMP: '/runner/tmp' })).toBe('/runner/tmp/job-sweeper/logs')
  // Outside a runner (the CLI on a shared host): another user's folder there would refuse this user's writes.
  expect(defaultLogsDir({})).toBe(join(tmpdir(), `job-sweeper-${process.getuid?.()}`, 'logs'))
  expect(defaultLogsDir({})).not.toBe(join(tmpdir(), 'job-sweeper', 'logs'))
})
