// A writer limited to the policy docs/logs.md gives (s3:PutObject and s3:AbortMultipartUpload on
// the logs' prefix, no read, list or delete), on the test cluster's S3 server: a bucket of its own,
// an account made through versitygw's admin API (PATCH /create-user, signed with the root keys as
// versitygw's own admin CLI signs it; its CLI would put the new secret on a command line), and the
// docs' statement as the bucket's policy for that account. Under it versitygw answers as AWS does:
// 403 AccessDenied for every GET, a missing key included (the root account still gets 404).
import { createHash, createHmac, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CreateBucketCommand, PutBucketPolicyCommand, S3Client } from '@aws-sdk/client-s3'
import { SignatureV4 } from '@smithy/signature-v4'

export interface Writer {
  accessKeyId: string
  secretAccessKey: string
}

/** The policy docs/logs.md gives, as the page writes it (bucket acme-deploy-logs, prefix my-app). */
export function documentedPolicy(): { Version: string; Statement: { Effect: string; Action: string[]; Resource: string }[] } {
  const page = readFileSync(join(import.meta.dirname, '..', 'docs', 'logs.md'), 'utf8')
  const json = /The least a writer needs[\s\S]*?```json\n([\s\S]*?)```/.exec(page)?.[1]
  if (!json) throw new Error('docs/logs.md gives no JSON policy under "The least a writer needs"')
  return JSON.parse(json)
}

type Data = string | ArrayBuffer | ArrayBufferView
const bytes = (d: Data): string | Uint8Array =>
  typeof d === 'string' ? d : d instanceof ArrayBuffer ? new Uint8Array(d) : new Uint8Array(d.buffer, d.byteOffset, d.byteLength)

/** SHA-256 and its HMAC as the signer asks for them, from node:crypto. */
class Sha256 {
  private readonly hash
  constructor(secret?: Data) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret))
  }
  update(data: Data): void {
    this.hash.update(bytes(data))
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest())
  }
}

/** The root account's keys and the server, from the suite's environment (the cluster's S3 server). */
function root(): { endpoint: string; region: string; credentials: Writer } {
  return {
    endpoint: process.env.JOB_SWEEPER_S3_ENDPOINT ?? '',
    region: process.env.AWS_REGION ?? 'us-east-1',
    credentials: { accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '', secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '' }
  }
}

export const s3As = (credentials: Writer): S3Client =>
  new S3Client({ endpoint: root().endpoint, region: root().region, forcePathStyle: true, credentials, maxAttempts: 1 })

/** A new bucket and an account that may do there only what docs/logs.md's policy allows, on `prefix`. */
export async function leastPrivilegeWriter(bucket: string, prefix: string): Promise<Writer> {
  const { endpoint, region, credentials } = root()
  const writer = { accessKeyId: `W${randomBytes(8).toString('hex').toUpperCase()}`, secretAccessKey: randomBytes(24).toString('base64url') }
  const body = `<Account><Access>${writer.accessKeyId}</Access><Secret>${writer.secretAccessKey}</Secret><Role>user</Role><UserID>0</UserID><GroupID>0</GroupID><ProjectID>0</ProjectID></Account>`
  const url = new URL('/create-user', endpoint)
  const signer = new SignatureV4({ credentials, region, service: 's3', sha256: Sha256 })
  const signed = await signer.sign({
    method: 'PATCH',
    protocol: url.protocol,
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query: {},
    headers: { host: url.host, 'x-amz-content-sha256': createHash('sha256').update(body).digest('hex') },
    body
  })
  const created = await fetch(url, { method: 'PATCH', headers: signed.headers, body })
  if (!created.ok) throw new Error(`versitygw refused to create the writer account: ${created.status} ${await created.text()}`)
  const admin = s3As(credentials)
  try {
    await admin.send(new CreateBucketCommand({ Bucket: bucket }))
    const policy = documentedPolicy()
    const Statement = policy.Statement.map((s) => ({
      ...s,
      // A bucket policy names whom it is for; the docs' policy is the writer's own (an IAM policy).
      Principal: { AWS: [writer.accessKeyId] },
      Resource: s.Resource.replace('acme-deploy-logs', bucket).replace('my-app', prefix)
    }))
    await admin.send(new PutBucketPolicyCommand({ Bucket: bucket, Policy: JSON.stringify({ ...policy, Statement }) }))
  } finally {
    admin.destroy()
  }
  return writer
}
