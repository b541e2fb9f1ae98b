// The cluster's S3 server, where job-sweeper's saved logs can go: versitygw (github.com/versity/versitygw,
// Apache-2.0, built by build.sh) over a directory of the cluster's own (its posix backend), on
// 127.0.0.1, with root credentials made for this cluster and one bucket created at start.
//
// The credentials are kept as the kubeconfig's token is: in files (mode 0600) under <dir>/pki. They
// reach versitygw through the environment variables it reads (ROOT_ACCESS_KEY, ROOT_SECRET_KEY),
// read from those files at each start, so no command line (`ps`), no <dir>/commands record, no
// cluster.json and no log holds them. The data directory is not pki/: versitygw serves every file
// under its directory as an object.
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3'
import { freePort, logTail, startProcess, waitFor } from './processes.ts'

/** The process name under <dir>/pids, <dir>/logs and <dir>/commands. */
export const S3_SERVER = '7-versitygw'

/** The bucket every cluster has; tests write under prefixes of their own. */
export const S3_BUCKET = 'job-sweeper-logs'

/** The region versitygw answers for (its default). */
const S3_REGION = 'us-east-1'

/** Where the cluster's S3 server is, as recorded in cluster.json: never its secret, only the files holding it. */
export interface S3Server {
  /** http://127.0.0.1:<port>, path-style: http://127.0.0.1:<port>/<bucket>/<key>. */
  endpoint: string
  /** The bucket created at start. */
  bucket: string
  /** The region requests are signed for. */
  region: string
  /** The directory versitygw stores the buckets in: <dir>/s3/<bucket>/<key>. */
  dataDir: string
  /** File (mode 0600) holding the root access key ID. */
  accessKeyFile: string
  /** File (mode 0600) holding the root secret access key. */
  secretKeyFile: string
}

const secret = (file: string): string => readFileSync(file, 'utf8').trim()

/** The variables that carry no secret, for every consumer of the server. */
function plainEnv(s3: S3Server): Record<string, string> {
  return { JOB_SWEEPER_S3_ENDPOINT: s3.endpoint, JOB_SWEEPER_S3_BUCKET: s3.bucket, AWS_REGION: s3.region }
}

/** The credentials' variables and the files they are read from. */
const credentialFiles = (s3: S3Server): Record<string, string> => ({ AWS_ACCESS_KEY_ID: s3.accessKeyFile, AWS_SECRET_ACCESS_KEY: s3.secretKeyFile })

/** The environment a test, or a child process of one, reaches the S3 server with (the AWS SDK reads the AWS_ ones). */
export function s3Env(s3: S3Server): Record<string, string> {
  const credentials = Object.entries(credentialFiles(s3)).map(([variable, file]) => [variable, secret(file)])
  return { ...plainEnv(s3), ...Object.fromEntries(credentials) }
}

/** The same variables as lines of a shell script to source; the credentials are read from their files then, so the script holds none. */
export function s3EnvScript(s3: S3Server): string {
  const plain = Object.entries(plainEnv(s3)).map(([variable, value]) => `export ${variable}='${value}'`)
  const credentials = Object.entries(credentialFiles(s3)).map(([variable, file]) => `export ${variable}="$(cat '${file}')"`)
  return [...plain, ...credentials].join('\n') + '\n'
}

/**
 * Starts versitygw for the cluster in `dir` on a free port with fresh root credentials, and
 * resolves once it has created the bucket with them (a signed request answered: it is up).
 */
export async function startS3Server(dir: string, binDir: string): Promise<S3Server> {
  const dataDir = join(dir, 's3')
  const iamDir = join(dir, 's3-iam')
  for (const d of [dataDir, iamDir, join(dir, 'pki')]) mkdirSync(d, { recursive: true })
  const accessKeyFile = join(dir, 'pki', 's3-access-key')
  const secretKeyFile = join(dir, 'pki', 's3-secret-key')
  writeFileSync(accessKeyFile, randomBytes(10).toString('hex').toUpperCase(), { mode: 0o600 })
  writeFileSync(secretKeyFile, randomBytes(30).toString('base64url'), { mode: 0o600 })
  const port = await freePort()
  const s3: S3Server = { endpoint: `http://127.0.0.1:${port}`, bucket: S3_BUCKET, region: S3_REGION, dataDir, accessKeyFile, secretKeyFile }
  // Without an IAM service (single-account mode) versitygw v1.8.0 answers an unknown access key
  // with 404 XAdminUserNotFound; with its internal one, empty but for the root account, it answers
  // 403 InvalidAccessKeyId, as S3 does.
  const args = [`--port=127.0.0.1:${port}`, `--region=${S3_REGION}`, `--iam-dir=${iamDir}`, 'posix', dataDir]
  startProcess(dir, S3_SERVER, join(binDir, 'versitygw'), args, {}, { ROOT_ACCESS_KEY: accessKeyFile, ROOT_SECRET_KEY: secretKeyFile })
  await createBucket(dir, s3)
  return s3
}

/** Creates the bucket, retrying while versitygw starts; one that exists already (a restart in the same dir) is fine. */
async function createBucket(dir: string, s3: S3Server): Promise<void> {
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: secret(s3.accessKeyFile), secretAccessKey: secret(s3.secretKeyFile) },
    maxAttempts: 1 // waitFor retries
  })
  let last = 'no answer yet'
  try {
    await waitFor(
      `versitygw at ${s3.endpoint} to create bucket ${s3.bucket}`,
      async () => {
        try {
          await client.send(new CreateBucketCommand({ Bucket: s3.bucket }))
        } catch (e) {
          if ((e as Error).name === 'BucketAlreadyOwnedByYou') return true
          last = `${(e as Error).name}: ${(e as Error).message}`
          throw e
        }
        return true
      },
      30_000,
      () => `last answer: ${last}\n${logTail(dir, S3_SERVER)}`
    )
  } finally {
    // Its keep-alive sockets would keep jest's main process (global setup) from exiting.
    client.destroy()
  }
}
