// Following a container's log into the store until the container ends: the keeper's save of a pod
// being stopped (plan/stopping.ts). The API server's follow (`kubectl logs -f`) sends the log from its
// start, then each line as it is written, and closes once the container ends; what came is stored
// whole under the same key a read of it would use. Pure I/O: it returns the file or why not.
import { Transform, type Readable } from 'node:stream'
import type { JobsClient, LogKeep } from '../kube/jobs-client.ts'
import { apiErrorMessage } from '../kube/errors.ts'
import { ClusterUnreachable } from '../kube/retry.ts'
import type { LogSink } from '../store/sink.ts'
import { TEXT, type SavedLogFile } from './logs.ts'

/** One container to follow: its pod's folder (`<jobKey>/<pod>`), and how long it may take to end. */
export interface FollowedContainer {
  namespace: string
  podKey: string
  pod: string
  container: string
  /** The follow ends after this long, keeping what came (the pod's grace period and a margin: a lost node never closes it). */
  deadlineMs: number
}

/**
 * Follows the container's log into `sink` until it ends; the file stored, or why it was not.
 * `end` ends it early keeping what came (its pod is gone and the stream stays open: a lost node);
 * so does the deadline. Such a file is `unfinished`: its last lines may be missing. `signal`
 * (the keeper stopping) ends it at once, storing nothing: the next leader follows it again.
 */
export async function followInto(
  client: JobsClient,
  sink: LogSink,
  keep: LogKeep,
  c: FollowedContainer,
  signal: AbortSignal,
  end: AbortSignal
): Promise<{ file: SavedLogFile } | { failure: string }> {
  const file = `${c.podKey}/${c.container}.log`
  const request = new AbortController()
  const stopped = AbortSignal.any([signal, request.signal])
  let bytes = 0
  let unfinished = false
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length
      done(null, chunk)
    }
  })
  let body: Readable | undefined
  // Ends the follow keeping what came: the stream to the store ends first, then the request.
  const finish = (): void => {
    if (unfinished || signal.aborted) return
    unfinished = true
    body?.unpipe(counted)
    counted.end()
    request.abort()
  }
  const timer = setTimeout(finish, c.deadlineMs)
  end.addEventListener('abort', finish, { once: true })
  try {
    body = await client.followLog(c.namespace, c.pod, c.container, keep.maxBytes, stopped)
    if (unfinished) {
      body.destroy()
      return { failure: `cannot follow the log of ${c.pod}/${c.container}: its pod was gone before the log was opened` }
    }
    body.on('error', (e) => {
      if (!unfinished) counted.destroy(e)
    })
    const target = await sink.open(file, TEXT)
    await target.write(body.pipe(counted))
    // The API server stops at limitBytes: a log that reached it was cut (its end not stored).
    return { file: { file, bytes, truncated: bytes >= keep.maxBytes, logBytes: bytes, cutBytes: 0, ...(unfinished ? { unfinished } : {}) } }
  } catch (e) {
    if (e instanceof ClusterUnreachable) throw e
    return { failure: `cannot follow the log of ${c.pod}/${c.container} to its end: ${apiErrorMessage(e)}` }
  } finally {
    clearTimeout(timer)
    end.removeEventListener('abort', finish)
  }
}

/**
 * Deletes the pods of a Job whose deletion was asked while they ran (plan/stopping.ts), each with its
 * own grace period and its uid as precondition; the names of those deleted (not gone already).
 */
export async function stopPods(client: JobsClient, namespace: string, pods: { name: string; uid: string }[]): Promise<string[]> {
  const deleted: string[] = []
  for (const pod of pods) if ((await client.deletePod(namespace, pod.name, pod.uid)) === 'deleted') deleted.push(pod.name)
  return deleted
}
