// Saved logs in an S3 bucket (or an S3-compatible store: GCS interoperability, Ceph RGW, versitygw),
// written with the AWS SDK for JavaScript v3. Each key is streamed with lib-storage's Upload: a log
// under 5 MiB is one PUT, a longer one a multipart upload of 5 MiB parts, one part in flight, so no
// log is held whole in memory. An object exists only once its upload completed: a PUT that fails
// writes nothing, and a multipart upload that fails (a part refused, the log's read broken, the
// completion refused) is aborted by Upload (leavePartsOnError: false), so no half object is left
// looking complete. Credentials and the region come from the SDK's standard chain (environment,
// web identity / IRSA, profiles), the endpoint from its AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL,
// which it reads itself; with an endpoint the bucket is addressed by path, as such stores expect.
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import type { LogsTarget } from '../settings/logs-dir.ts'
import { INPUT, SettingsError } from '../settings/inputs.ts'
import { SinkError, type LogSink, type SinkObject } from './sink.ts'

type S3Target = Extract<LogsTarget, { kind: 's3' }>

/** lib-storage's smallest part (S3's minimum for every part but the last). */
const PART_BYTES = 5 * 1024 * 1024
/** Attempts per request: the SDK's standard retry mode backs off with jitter between them (429, 5xx, refused or reset connections, timeouts). */
const MAX_ATTEMPTS = 3

/** The client for `target`, configured as the SDK's documentation says a user would; everything else is the SDK's chain. */
export function s3Client(target: S3Target, env: NodeJS.ProcessEnv = process.env): S3Client {
  const config: S3ClientConfig = {
    // Given whether it came from s3-endpoint or from the SDK's own variables (then the same value).
    endpoint: target.endpoint,
    forcePathStyle: target.endpoint !== undefined,
    maxAttempts: MAX_ATTEMPTS,
    // A store that accepts a connection and never answers, or goes silent mid-upload, fails the request.
    requestHandler: { connectionTimeout: 10_000, socketTimeout: 30_000 }
  }
  // S3-compatible stores differ in the newer checksum headers the SDK sends by default; with an
  // endpoint, checksums go only where the API requires them, unless the environment says otherwise.
  if (target.endpoint !== undefined && !env.AWS_REQUEST_CHECKSUM_CALCULATION) config.requestChecksumCalculation = 'WHEN_REQUIRED'
  if (target.endpoint !== undefined && !env.AWS_RESPONSE_CHECKSUM_VALIDATION) config.responseChecksumValidation = 'WHEN_REQUIRED'
  return new S3Client(config)
}

/** An SDK error in words: the HTTP status and S3's error code and message, or the network's, and the attempts made. */
function s3ErrorWords(e: unknown): string {
  const err = e as { name?: string; message?: string; code?: string; $metadata?: { httpStatusCode?: number; attempts?: number }; cause?: unknown }
  const status = err.$metadata?.httpStatusCode
  const attempts = err.$metadata?.attempts
  const cause = err.cause as { code?: string; message?: string } | undefined
  const network = err.code ?? cause?.code
  let words: string
  if (status !== undefined)
    words = `${status} ${err.name ?? 'Error'}${err.message && err.message !== err.name && err.message !== 'UnknownError' ? `: ${err.message}` : ''}`
  else words = network && !(err.message ?? '').includes(network) ? `${network}: ${err.message}` : (err.message ?? String(e))
  return attempts && attempts > 1 ? `${words} (after ${attempts} attempts)` : words
}

export class S3Sink implements LogSink {
  readonly where: string
  private readonly target: S3Target
  private readonly client: S3Client

  constructor(target: S3Target, client: S3Client = s3Client(target)) {
    this.where = target.url
    this.target = target
    this.client = client
  }

  async open(key: string, contentType: string): Promise<SinkObject> {
    const Key = this.target.prefix ? `${this.target.prefix}/${key}` : key
    return {
      write: async (body) => {
        const upload = new Upload({
          client: this.client,
          params: { Bucket: this.target.bucket, Key, Body: body, ContentType: contentType },
          partSize: PART_BYTES,
          queueSize: 1,
          leavePartsOnError: false
        })
        try {
          await upload.done()
        } catch (e) {
          throw new SinkError(`${INPUT.logsDir} '${this.where}': cannot upload ${Key} to bucket '${this.target.bucket}': ${s3ErrorWords(e)}`)
        }
      },
      // Nothing was sent before write.
      discard: async () => undefined
    }
  }

  async close(): Promise<void> {
    this.client.destroy()
  }
}

/**
 * Checks, before the cluster is touched, that the SDK finds a region and credentials for the
 * bucket (no request is made: a store that refuses them is found by the first upload, whose
 * failure the on-log-failure policy handles), and hands every secret of the credentials to `mask`.
 */
export async function checkS3Target(target: S3Target, mask: (secret: string) => void, client: S3Client = s3Client(target)): Promise<void> {
  const refuse = (what: string, e: unknown): never => {
    throw new SettingsError(`Invalid ${INPUT.logsDir} '${target.url}': ${what} (${e instanceof Error ? e.message : String(e)})`)
  }
  try {
    await client.config.region().catch((e: unknown) => refuse('the AWS SDK finds no region: set AWS_REGION, or a region in the AWS profile', e))
    const credentials = await client.config
      .credentials()
      .catch((e: unknown) =>
        refuse('the AWS SDK finds no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a web identity (IRSA, GitHub OIDC) or an AWS profile', e)
      )
    mask(credentials.secretAccessKey)
    if (credentials.sessionToken) mask(credentials.sessionToken)
  } finally {
    client.destroy()
  }
}
