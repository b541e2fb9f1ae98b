// A log target for the stream's tests: the file at `path`, as the harvest writes it.
import { open } from 'node:fs/promises'
import { pipeline } from 'node:stream/promises'
import type { LogTarget } from '../../src/kube/jobs-client.ts'

/** The file at `path` (created 0600, or emptied) as a log target. */
export const fileAt =
  (path: string): (() => Promise<LogTarget>) =>
  async () => {
    const handle = await open(path, 'w', 0o600)
    return { write: (body) => pipeline(body, handle.createWriteStream()), discard: () => handle.close() }
  }
