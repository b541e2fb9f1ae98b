// Durations as users write them in workflow files: 90s, 15m, 1h30m, 7d, or plain seconds.

const UNIT_SECONDS = { d: 86400, h: 3600, m: 60, s: 1 } as const
const DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/

/**
 * Seconds in `text`, or undefined when it is not a duration like 90s, 15m, 1h30m, 7d or 3600.
 * A number too large to count exactly (99999999999999999999) is not a duration either.
 */
export function parseDuration(text: string): number | undefined {
  const value = text.trim()
  if (/^\d+$/.test(value)) return exact(Number(value))
  const m = DURATION.exec(value)
  if (!m || value === '') return undefined
  const [, d, h, min, s] = m
  return exact(Number(d ?? 0) * UNIT_SECONDS.d + Number(h ?? 0) * UNIT_SECONDS.h + Number(min ?? 0) * UNIT_SECONDS.m + Number(s ?? 0))
}

function exact(n: number): number | undefined {
  return Number.isSafeInteger(n) ? n : undefined
}

/** A duration for people: 1h30m, 45s, 2d3h. */
export function formatDuration(seconds: number): string {
  let rest = Math.max(0, Math.round(seconds))
  if (rest === 0) return '0s'
  let out = ''
  for (const [unit, size] of Object.entries(UNIT_SECONDS)) {
    const n = Math.floor(rest / size)
    if (n > 0) out += `${n}${unit}`
    rest -= n * size
  }
  return out
}
