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

/** What the bucket holds of one Job's folder (`<prefix>/<namespace>/<job>/`): its keys, its container's log ('' when there is none) and its job.json (when there is one). */
export async function savedJob(
  client: S3Client,
  Bucket: string,
  folder: string,
  container = 'main'
): Promise<{ keys: string[]; log: string; jobFile?: { uid?: string; status?: string; savedBy?: { phase?: string; keeper?: string; attempt?: number } } }> {
  const keys = await keysUnder(client, Bucket, folder)
  const logKey = keys.find((k) => k.endsWith(`/${container}.log`))
  const log = logKey ? (await objectBytes(client, Bucket, logKey)).toString() : ''
  const jobFile = keys.includes(`${folder}job.json`) ? JSON.parse((await objectBytes(client, Bucket, `${folder}job.json`)).toString()) : undefined
  return { keys, log, jobFile }
}
