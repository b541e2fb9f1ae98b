// Which headers the fault proxy forwards: all but the hop-by-hop ones, repeated ones kept.
// Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are not forwarded.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate'
])

/** Request headers to forward, from rawHeaders (repeated headers kept). */
export function withoutHopByHop(raw: string[]): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {}
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase()
    if (HOP_BY_HOP.has(name) || name === 'host') continue
    const seen = headers[name]
    headers[name] = seen === undefined ? raw[i + 1] : [...(Array.isArray(seen) ? seen : [seen]), raw[i + 1]]
  }
  return headers
}

/** Response headers to send back, as a flat name/value list; a cut body has no fixed length. */
export function answerHeaders(raw: string[], cut: boolean): string[] {
  const out: string[] = []
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase()
    if (HOP_BY_HOP.has(name) || (cut && name === 'content-length')) continue
    out.push(raw[i], raw[i + 1])
  }
  return out
}
