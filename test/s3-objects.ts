// Reading back what a test wrote to the local S3 server (test/cluster/s3.ts): an object's bytes,
// and the keys under a prefix, every page of the listing.
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3'

export async function objectBytes(client: S3Client, Bucket: string, Key: string): Promise<Buffer> {
  const got = await client.send(new GetObjectCommand({ Bucket, Key }))
  return Buffer.from(await (got.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray())
}

/** The keys under `Prefix`, sorted. */
export async function keysUnder(client: S3Client, Bucket: string, Prefix: string): Promise<string[]> {
  const keys: string[] = []
  let ContinuationToken: string | undefined
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix, ContinuationToken }))
    keys.push(...(page.Contents ?? []).map((o) => o.Key ?? ''))
    ContinuationToken = page.NextContinuationToken
  } while (ContinuationToken)
  return keys.sort()
}

/**
 * What the bucket holds of one Job under `folder` (`<prefix>/<namespace>/<job>/`): a phase's save
 * there, or the keeper's archive in the Job's uid folder under it (`<job>/<uid>/`: `uid`'s, or the
 * one there). Its keys (all under `folder`), the archive's folder, its container's log ('' when
 * there is none) and its job.json (when there is one).
 */
export async function savedJob(
  client: S3Client,
  Bucket: string,
  folder: string,
  container = 'main',
  uid?: string
): Promise<{
  keys: string[]
  folder: string
  log: string
  jobFile?: { uid?: string; status?: string; savedBy?: { phase?: string; keeper?: string; attempt?: number } }
}> {
  const keys = await keysUnder(client, Bucket, folder)
  const under = uid ? `${folder}${uid}/` : folder
  const jobFileKey = keys.find((k) => k === `${under}job.json`) ?? keys.find((k) => k.startsWith(under) && /^[^/]+\/job\.json$/.test(k.slice(under.length)))
  const base = jobFileKey ? jobFileKey.slice(0, -'job.json'.length) : under
  const logKey = keys.find((k) => k.startsWith(base) && k.endsWith(`/${container}.log`))
  const log = logKey ? (await objectBytes(client, Bucket, logKey)).toString() : ''
  const jobFile = jobFileKey ? JSON.parse((await objectBytes(client, Bucket, jobFileKey)).toString()) : undefined
  return { keys, folder: base, log, jobFile }
}
