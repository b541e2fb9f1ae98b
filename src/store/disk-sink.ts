// Saved logs in a directory: each key is a file under it, written to `<file>.partial` and renamed
// into place once complete, so a file that is there is whole (a read that fails leaves no half
// file, and the previous run's file stays until the new one is complete). Logs can hold secrets:
// directories are created 0700 and files 0600, for the runner's user only.
import { mkdir, open, rename, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { SinkError, type LogSink, type SinkObject } from './sink.ts'

const why = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message : String(e))

export class DiskSink implements LogSink {
  readonly where: string

  constructor(dir: string) {
    this.where = dir
  }

  async open(key: string, _contentType?: string): Promise<SinkObject> {
    const file = join(this.where, ...key.split('/'))
    const partial = `${file}.partial`
    let handle
    try {
      await mkdir(dirname(file), { recursive: true, mode: 0o700 })
      handle = await open(partial, 'w', 0o600)
    } catch (e) {
      throw new SinkError(`cannot write ${file} (${why(e)})`)
    }
    const opened = handle
    let written = false
    return {
      write: async (body) => {
        written = true
        try {
          await pipeline(body, opened.createWriteStream())
          await rename(partial, file)
        } catch (e) {
          await rm(partial, { force: true })
          throw new SinkError(`cannot write ${file} (${why(e)})`)
        }
      },
      discard: async () => {
        if (written) return
        await opened.close()
        await rm(partial, { force: true })
      }
    }
  }

  async close(): Promise<void> {}
}
