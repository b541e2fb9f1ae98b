// Where saved logs go: one interface, a directory (disk-sink.ts) or a bucket (s3-sink.ts). The
// harvest writes to it and nothing else: a key is a '/'-separated path under logs-dir
// (<namespace>/<job>/<uid>/<pod>/<container>.log, <namespace>/<job>/<uid>/job.json), the same in both.
import { Readable } from 'node:stream'
import type { LogTarget } from '../kube/jobs-client.ts'

/** One object being written: the stream goes in once, stored whole or not at all; or it is given up. */
export type SinkObject = LogTarget

/** A directory or a bucket that saved logs are written to. */
export interface LogSink {
  /** logs-dir as the user reads it: the directory, or s3://bucket/prefix. */
  readonly where: string
  /**
   * Starts writing `key` (whatever is there is replaced once the new one is complete). A directory
   * that cannot be written fails here, before a log is asked for; a bucket fails when it is written.
   */
  open(key: string, contentType: string): Promise<SinkObject>
  /** Frees what the sink holds (a client's connections); the sink is not used after. */
  close(): Promise<void>
}

/**
 * A write the sink could not do, its message saying where and why in words (`cannot write …
 * (EACCES)`, `… refused: 403 AccessDenied: …`). It carries no cause and no status code of its own:
 * what retries the log's read never retries it, the sink's own client having done its retries.
 */
export class SinkError extends Error {
  override name = 'SinkError'
}

/** Writes a small text (job.json, a note) whole at `key`. */
export async function writeText(sink: LogSink, key: string, text: string, contentType: string): Promise<void> {
  const object = await sink.open(key, contentType)
  await object.write(Readable.from([Buffer.from(text)]))
}
