// Sizes as Kubernetes writes them (10Mi, 512Ki, 1Gi), with an optional B (10MiB), or bytes.

const UNIT_BYTES: Record<string, number> = { '': 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 }
const SIZE = /^(\d+)\s*(Ki|Mi|Gi|Ti)?B?$/

/** Bytes in `text`, or undefined when it is not a size like 10Mi, 10MiB, 512Ki or 1048576. */
export function parseSize(text: string): number | undefined {
  const m = SIZE.exec(text.trim())
  if (!m) return undefined
  const bytes = Number(m[1]) * UNIT_BYTES[m[2] ?? '']
  return Number.isSafeInteger(bytes) ? bytes : undefined
}
