// The sink logs-dir names: a directory, or a bucket. The AWS SDK is loaded only for a bucket: for
// everyone else it would cost 16 MB of memory and 50 ms at every start.
import type { LogsTarget } from '../settings/logs-dir.ts'
import { DiskSink } from './disk-sink.ts'
import type { LogSink } from './sink.ts'

export async function openLogSink(target: LogsTarget): Promise<LogSink> {
  if (target.kind === 'dir') return new DiskSink(target.dir)
  const { S3Sink } = await import('./s3-sink.ts')
  return new S3Sink(target)
}
