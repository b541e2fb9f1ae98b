// A sink that remembers what it stored: the keys whose write completed, in order. upload-logs
// uploads exactly these (and the report file), not whatever else is in logs-dir (a pre phase's
// logs in the same directory as the post step's, another run's).
import type { LogSink, SinkObject } from './sink.ts'

/** A sink, and the keys it stored whole so far. */
export interface RecordedSink extends LogSink {
  /** Keys stored whole, in the order their writes completed. */
  readonly stored: readonly string[]
}

export function recorded(sink: LogSink): RecordedSink {
  const stored: string[] = []
  return {
    where: sink.where,
    stored,
    open: async (key: string, contentType: string): Promise<SinkObject> => {
      const object = await sink.open(key, contentType)
      return {
        write: async (body) => {
          await object.write(body)
          stored.push(key)
        },
        discard: () => object.discard()
      }
    },
    close: () => sink.close()
  }
}
