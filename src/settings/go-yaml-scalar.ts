// A scalar as Helm reads it: go-yaml v2's resolve.go and decoder.scalar, ported (go.yaml.in/yaml/v2
// v2.4.4, under sigs.k8s.io/yaml v1.6.0, which Helm 3 and 4 and kubectl read manifests with). Its
// YAML 1.1 is not quite the spec's: integers are whatever Go's strconv.ParseInt(s, 0, 64) takes once
// every underscore is removed (0755 and 0o755 are 493, 0x1F, 0b101), sexagesimal numbers (1:30) are
// strings, and so are timestamps (2001-12-14) decoded into an interface{}, kept as written.
// Test table: test/unit/helm-yaml.test.ts, against the real thing's output (fixtures/helm-yaml.json).

const TAG_PREFIX = 'tag:yaml.org,2002:'
const tag = (name: string): string => `${TAG_PREFIX}${name}`
export const MERGE_TAG = tag('merge')
const [STR, BOOL, INT, FLOAT, NULL, TIMESTAMP, BINARY] = ['str', 'bool', 'int', 'float', 'null', 'timestamp', 'binary'].map(tag)

/** A scalar decoded into a Go interface{}: the Go type decides how it becomes a JSON map key. */
export type GoScalar =
  | { type: 'string'; value: string }
  | { type: 'bool'; value: boolean }
  | { type: 'null' }
  /** A Go int, or a uint64 above int64's range: exact, as Helm writes it to JSON. */
  | { type: 'int'; value: bigint }
  | { type: 'float'; value: number }

type Resolved = { tag: string; value: GoScalar }

const str = (value: string): GoScalar => ({ type: 'string', value })
const shortTag = (t: string): string => (t.startsWith(TAG_PREFIX) ? `!!${t.slice(TAG_PREFIX.length)}` : t)

// resolve.go's resolveMap: the only spellings of booleans, nulls and the special floats.
const spelled = (spellings: string[], tag: string, value: GoScalar): [string, Resolved][] => spellings.map((s) => [s, { tag, value }])
const NAMED = new Map<string, Resolved>([
  ...spelled(['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON'], BOOL, { type: 'bool', value: true }),
  ...spelled(['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF'], BOOL, { type: 'bool', value: false }),
  ...spelled(['', '~', 'null', 'Null', 'NULL'], NULL, { type: 'null' }),
  ...spelled(['.nan', '.NaN', '.NAN'], FLOAT, { type: 'float', value: NaN }),
  ...spelled(['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF'], FLOAT, { type: 'float', value: Infinity }),
  ...spelled(['-.inf', '-.Inf', '-.INF'], FLOAT, { type: 'float', value: -Infinity })
])

const INT64_MAX = (1n << 63n) - 1n
const UINT64_MAX = (1n << 64n) - 1n

/** strconv.ParseUint(s, base, 64), base 0 meaning Go's prefixes (0b, 0o, 0x, or a leading 0: octal). */
function parseUint(s: string, base: number): bigint | undefined {
  if (s === '') return undefined
  if (base === 0) {
    base = 10
    if (s[0] === '0') {
      const prefix = s.length >= 3 ? ({ b: 2, o: 8, x: 16 } as Record<string, number>)[s[1].toLowerCase()] : undefined
      base = prefix ?? 8
      s = s.slice(prefix === undefined ? 1 : 2)
    }
  }
  let n = 0n
  for (const c of s.toLowerCase()) {
    const d = c >= '0' && c <= '9' ? c.charCodeAt(0) - 48 : c >= 'a' && c <= 'z' ? c.charCodeAt(0) - 87 : 99
    if (d >= base) return undefined
    n = n * BigInt(base) + BigInt(d)
    if (n > UINT64_MAX) return undefined
  }
  return n
}

/** strconv.ParseInt(s, base, 64). */
function parseInt64(s: string, base: number): bigint | undefined {
  const neg = s[0] === '-'
  const un = parseUint(s[0] === '-' || s[0] === '+' ? s.slice(1) : s, base)
  if (un === undefined || un > (neg ? INT64_MAX + 1n : INT64_MAX)) return undefined
  return neg ? -un : un
}

const int = (value: bigint): Resolved => ({ tag: INT, value: { type: 'int', value } })
const float = (value: number): Resolved => ({ tag: FLOAT, value: { type: 'float', value } })
// resolve.go's yamlStyleFloat, tried on the text without underscores.
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/
// What strconv.ParseFloat takes of a text that starts with a dot: underscores only between digits.
const DOT_FLOAT = /^\.[0-9]+(_[0-9]+)*([eE][-+]?[0-9]+(_[0-9]+)*)?$/
// time.Parse's layouts in resolve.go's allowedTimestampFormats (only an explicit !!timestamp needs them).
const TIMESTAMP_TEXT =
  /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(?:[.,]\d+)?(?:Z|[-+]\d{2}:\d{2})| (\d{1,2}):(\d{1,2}):(\d{1,2})(?:[.,]\d+)?)?$/

function isTimestamp(s: string): boolean {
  const m = TIMESTAMP_TEXT.exec(s)
  if (!m) return false
  const [y, mo, d, h, mi, se] = [m[1], m[2], m[3], m[4] ?? m[7] ?? '0', m[5] ?? m[8] ?? '0', m[6] ?? m[9] ?? '0'].map(Number)
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1] ?? 0
  return d >= 1 && d <= days && h < 24 && mi < 60 && se < 60
}

/** A finite float, as strconv.ParseFloat gives it (a value beyond float64 is an error there). */
const finite = (text: string): Resolved | undefined => {
  const f = Number(text.replaceAll('_', ''))
  return Number.isFinite(f) ? float(f) : undefined
}

/** resolve.go's resolve(tag, in) for a plain (or tagged) scalar; throws as its failf does. */
function resolve(explicitTag: string, text: string): Resolved {
  const resolved = resolveUntagged(explicitTag, text)
  if (explicitTag === '' || explicitTag === resolved.tag || explicitTag === STR) return resolved
  // !!float takes an int, not a uint64 (resolve.go converts int and int64 only).
  if (explicitTag === FLOAT && resolved.value.type === 'int' && resolved.value.value <= INT64_MAX) return float(Number(resolved.value.value))
  throw new Error(`cannot decode ${shortTag(resolved.tag)} \`${text}\` as a ${shortTag(explicitTag)}`)
}

function resolveUntagged(explicitTag: string, text: string): Resolved {
  const hint = text === '' ? 'N' : /[-+]/.test(text[0]) ? 'S' : /[0-9]/.test(text[0]) ? 'D' : /[yYnNtTfFoO~]/.test(text[0]) ? 'M' : text[0] === '.' ? '.' : ''
  if (hint === '' || explicitTag === STR) return { tag: STR, value: str(text) }
  const named = NAMED.get(text)
  if (named) return named
  if (hint === '.') return (DOT_FLOAT.test(text) && finite(text)) || { tag: STR, value: str(text) }
  if (hint === 'D' || hint === 'S') {
    // A timestamp stays the text: decoder.scalar sets an interface{} to the string "for backward compatibility".
    if ((explicitTag === '' || explicitTag === TIMESTAMP) && isTimestamp(text)) return { tag: TIMESTAMP, value: str(text) }
    const plain = text.replaceAll('_', '')
    const i = parseInt64(plain, 0) ?? parseUint(plain, 0)
    if (i !== undefined) return int(i)
    const f = YAML_STYLE_FLOAT.test(plain) ? finite(plain) : undefined
    if (f) return f
    // resolve.go tries the digits after 0b as base 2 (a sign there included), and -0b too.
    const b = plain.startsWith('0b')
      ? (parseInt64(plain.slice(2), 2) ?? parseUint(plain.slice(2), 2))
      : plain.startsWith('-0b')
        ? parseInt64(`-${plain.slice(3)}`, 2)
        : undefined
    if (b !== undefined) return int(b)
  }
  return { tag: STR, value: str(text) }
}

/** !!binary: base64 as Go's StdEncoding takes it (padded; line breaks ignored), decoded to a string. */
function binary(text: string): GoScalar {
  const b64 = text.replace(/[\r\n]/g, '')
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(b64)) throw new Error('!!binary value contains invalid base64 data')
  return str(Buffer.from(b64, 'base64').toString('utf8'))
}

/**
 * decoder.scalar into an interface{}: `tag` is the explicit tag ('' for none), `implicit` whether
 * the scalar was plain or tagged `!`, as libyaml reports it; a quoted, untagged scalar is a string.
 */
export function goScalar(tagName: string, text: string, implicit: boolean): GoScalar {
  if (tagName === '' && !implicit) return str(text)
  if (tagName === BINARY) return binary(text)
  // Only the core tags resolve; any other (`!`, `!foo`, !!merge as a value) leaves the text.
  if (![STR, BOOL, INT, FLOAT, NULL, TIMESTAMP, ''].includes(tagName)) return str(text)
  return resolve(tagName, text).value
}

/** strconv.FormatFloat(f, 'g', -1, 32): the shortest digits that give back the same float32. */
function formatFloat32(f: number): string {
  const f32 = Math.fround(f)
  if (Number.isNaN(f32)) return '.nan'
  if (!Number.isFinite(f32)) return f32 > 0 ? '.inf' : '-.inf'
  const sign = f32 < 0 || Object.is(f32, -0) ? '-' : ''
  const abs = Math.abs(f32)
  if (abs === 0) return `${sign}0`
  let e = ''
  for (let p = 1; p <= 9 && !e; p++) if (Math.fround(Number(abs.toExponential(p - 1))) === abs) e = abs.toExponential(p - 1)
  const [mantissa, exp] = e.split('e')
  const digits = mantissa.replace('.', '')
  const x = Number(exp)
  // %e when the exponent is below -4 or at least 6 (the shortest format's precision), as Go does.
  if (x < -4 || x >= 6) return `${sign}${mantissa}e${x < 0 ? '-' : '+'}${String(Math.abs(x)).padStart(2, '0')}`
  if (x < 0) return `${sign}0.${'0'.repeat(-x - 1)}${digits}`
  return sign + (digits.length > x + 1 ? `${digits.slice(0, x + 1)}.${digits.slice(x + 1)}` : digits.padEnd(x + 1, '0'))
}

/** The JSON key sigs.k8s.io/yaml makes of a map key (convertToJSONableObject), or why it refuses. */
export function jsonKey(key: GoScalar): string | { refused: string } {
  switch (key.type) {
    case 'string':
      return key.value
    case 'bool':
      return String(key.value)
    case 'null':
      return { refused: 'a null map key (unsupported map key of type <nil>)' }
    case 'int':
      // A uint64 (above int64) is a type convertToJSONableObject has no case for.
      return key.value > INT64_MAX ? { refused: `map key ${key.value} is above int64 (unsupported map key of type uint64)` } : String(key.value)
    case 'float':
      return formatFloat32(key.value)
  }
}

/** The JSON value of a scalar: json.Marshal has no NaN or infinity. */
export function jsonScalar(s: GoScalar): string | number | boolean | null | { refused: string } {
  switch (s.type) {
    case 'null':
      return null
    case 'int':
      return Number(s.value)
    case 'float':
      return Number.isFinite(s.value) ? s.value : { refused: `json: unsupported value: ${Number.isNaN(s.value) ? 'NaN' : s.value > 0 ? '+Inf' : '-Inf'}` }
    default:
      return s.value
  }
}
