// A multi-document YAML text read as Helm reads a release's manifest, so that what we check is what
// the upgrade sends. Helm's kube client (Helm 3 and 4 alike) reads it with k8s.io/apimachinery's
// YAMLOrJSONDecoder: the text is cut at each line that starts with `---`, and each piece goes through
// sigs.k8s.io/yaml v1.6.0, which decodes it with go-yaml v2 (YAML 1.1) and turns the result into
// JSON. The yaml package parses the syntax; the rest is theirs, ported: scalars (go-yaml-scalar.ts),
// merge keys, anchors and their limits (decode.go), and non-string map keys (convertToJSONableObject).
// Checked case by case against the real thing: test/unit/helm-yaml.test.ts.
import { isAlias, isMap, isNode, isScalar, isSeq, parseAllDocuments, visit, type Alias, type Document, type Node, type Pair, type Scalar } from 'yaml'
import { goScalar, jsonKey, jsonScalar, MERGE_TAG, type GoScalar } from './go-yaml-scalar.ts'

/** One document of the text as Helm's kube client reads it. */
export interface HelmDocument {
  /** The document as JSON (sigs.k8s.io/yaml's YAMLToJSON, parsed); never null: empty documents are left out, as kubectl and Helm do. */
  value: unknown
  /** The path on the `# Source: <path>` line Helm writes before each file it renders (a later document of the same file has none: it keeps the file's). */
  source?: string
  /** The line the document starts on. */
  line: number
}

/** A piece of the text between two `---` lines (apimachinery's YAMLReader), and the line it starts on. */
interface Piece {
  text: string
  line: number
}

function pieces(text: string, firstLine: number): Piece[] {
  const found: Piece[] = []
  let lines: string[] = []
  let start = firstLine
  text.split(/(?<=\n)/).forEach((line, i) => {
    if (line.startsWith('---')) {
      const rest = line.slice(3).trim()
      if (rest !== '' && !rest.startsWith('#'))
        throw new Error(`line ${firstLine + i}: invalid YAML document separator '${line.trimEnd()}': Helm and kubectl allow only a comment after ---`)
      if (lines.length > 0) found.push({ text: lines.join(''), line: start })
      lines = []
      return
    }
    if (lines.length === 0) start = firstLine + i
    lines.push(line)
  })
  if (lines.length > 0) found.push({ text: lines.join(''), line: start })
  return found
}

// Syntax only: every scalar stays text (failsafe) for go-yaml-scalar.ts to resolve; no tag of the
// yaml package's own (go-yaml v2 ignores a collection's tag); duplicate keys are go-yaml's to settle.
const PARSE = { version: '1.1', schema: 'failsafe', resolveKnownTags: false, uniqueKeys: false, keepSourceTokens: true, prettyErrors: false } as const

const lineAt = (piece: Piece, offset: number): number => piece.line + (piece.text.slice(0, offset).match(/\n/g)?.length ?? 0)

/** The first YAML document of a piece, the only one Helm reads (yaml.Unmarshal stops after it), and the piece it was parsed from. */
function firstDocument(piece: Piece): { doc: Document.Parsed; parsed: Piece } | undefined {
  let text = piece.text
  for (;;) {
    const docs = parseAllDocuments(text, PARSE)
    if (docs.length === 0) {
      // Only a directive (and comments): libyaml wants the document it introduces, and no `---` can follow in a piece.
      if (/^%/m.test(text)) throw new Error(`line ${piece.line}: did not find expected <document start> after a %-directive`)
      return undefined
    }
    const doc = docs[0]
    // libyaml knows \' in double quotes (the yaml package does not): write it as \x27 and parse again.
    const quotes = doc.errors.filter((e) => e.code === 'BAD_DQ_ESCAPE' && text.startsWith("\\'", e.pos[0]))
    if (quotes.length === 0) {
      if (doc.errors.length > 0) throw new Error(`line ${lineAt({ ...piece, text }, doc.errors[0].pos[0])}: ${doc.errors[0].message}`)
      return { doc, parsed: { ...piece, text } }
    }
    for (const e of quotes.reverse()) text = `${text.slice(0, e.pos[0])}\\x27${text.slice(e.pos[0] + 2)}`
  }
}

/** Each alias's node: the last node before it with its anchor, as libyaml binds it while parsing. */
function aliasTargets(doc: Document.Parsed, piece: Piece): Map<Alias, Node> {
  const anchors = new Map<string, Node>()
  const targets = new Map<Alias, Node>()
  visit(doc, (_key, node) => {
    if (isAlias(node)) {
      const target = anchors.get(node.source)
      if (!target) throw new Error(`line ${lineAt(piece, node.range?.[0] ?? 0)}: unknown anchor '${node.source}' referenced`)
      targets.set(node, target)
    } else if (isNode(node) && node.anchor) anchors.set(node.anchor, node)
    // The yaml package takes \/ in double quotes; libyaml, and so Helm, refuse it.
    if (
      isScalar(node) &&
      node.type === 'QUOTE_DOUBLE' &&
      /(^|[^\\])(\\\\)*\\\//.test(node.srcToken?.type === 'double-quoted-scalar' ? node.srcToken.source : '')
    )
      throw new Error(`line ${lineAt(piece, node.range?.[0] ?? 0)}: found unknown escape character \\/ (YAML 1.1 has no \\/ escape)`)
  })
  return targets
}

/** A map as go-yaml v2 builds it in a map[interface{}]interface{}: keyed by Go value and type. */
class GoMap {
  readonly entries = new Map<string, { key: GoScalar; text: string; value: GoValue }>()
  set(key: GoScalar, text: string, value: GoValue): void {
    // Go map keys: 1 (int), 1.0 (float) and "1" differ; 0.0 and -0.0 do not; NaN is never equal.
    const id =
      key.type === 'null'
        ? 'null'
        : key.type === 'float' && Number.isNaN(key.value)
          ? `NaN ${this.entries.size}`
          : `${key.type} ${key.type === 'float' && key.value === 0 ? 0 : key.value}`
    this.entries.set(id, { key, text, value })
  }
}
type GoValue = GoScalar | GoValue[] | GoMap

// decode.go's allowedAliasRatio: how much of a document may come from expanding aliases.
function allowedAliasRatio(decodes: number): number {
  const [low, high] = [400000, 4000000]
  return decodes <= low ? 0.99 : decodes >= high ? 0.1 : 0.99 - 0.89 * ((decodes - low) / (high - low))
}

const isMergeKey = (k: unknown): boolean =>
  isScalar(k) && k.source === '<<' && ((k.tag === undefined && k.type === 'PLAIN') || k.tag === '!' || k.tag === MERGE_TAG)

/** A key as written, for messages. */
const keyText = (key: unknown): string =>
  isScalar(key) ? (key.type === 'PLAIN' ? String(key.source) : JSON.stringify(key.source)) : isAlias(key) ? `*${key.source}` : String(key)

/** decode.go's decoder over the yaml package's nodes, into an interface{}. */
class Decoder {
  private decodes = 0
  private aliased = 0
  private aliasDepth = 0
  private readonly expanding = new Set<Alias>()
  private readonly targets: Map<Alias, Node>
  private readonly at: (node: unknown, message: string) => Error

  constructor(targets: Map<Alias, Node>, at: (node: unknown, message: string) => Error) {
    this.targets = targets
    this.at = at
  }

  unmarshal(node: unknown, into?: GoMap): GoValue {
    this.decodes++
    if (this.aliasDepth > 0) this.aliased++
    if (this.aliased > 100 && this.decodes > 1000 && this.aliased / this.decodes > allowedAliasRatio(this.decodes))
      throw this.at(node, 'document contains excessive aliasing')
    if (isAlias(node)) return this.alias(node, into)
    if (isMap(node)) return this.mapping(node.items as Pair[], into ?? new GoMap())
    if (isSeq(node)) return node.items.map((item) => this.unmarshal(item))
    return this.scalar(node as Scalar | null)
  }

  private alias(node: Alias, into?: GoMap): GoValue {
    if (this.expanding.has(node)) throw this.at(node, `anchor '${node.source}' value contains itself`)
    this.expanding.add(node)
    this.aliasDepth++
    try {
      return this.unmarshal(this.targets.get(node), into)
    } finally {
      this.aliasDepth--
      this.expanding.delete(node)
    }
  }

  private scalar(node: Scalar | null): GoScalar {
    // No node is libyaml's empty plain scalar (`? a` without a value): null.
    if (!node) return { type: 'null' }
    const tag = node.tag ?? ''
    try {
      return goScalar(tag, node.source ?? '', (tag === '' && node.type === 'PLAIN') || tag === '!')
    } catch (e) {
      throw this.at(node, (e as Error).message)
    }
  }

  // Keys are set in order, a merge too: go-yaml v2 lets a merged key overwrite a key written
  // before `<<` (the spec says explicit keys win), and a later key overwrite both.
  private mapping(pairs: Pair[], out: GoMap): GoMap {
    for (const { key, value } of pairs) {
      if (isMergeKey(key)) {
        this.merge(value, out)
        continue
      }
      const k = this.unmarshal(key)
      if (Array.isArray(k) || k instanceof GoMap) throw this.at(key, `invalid map key: a ${Array.isArray(k) ? 'sequence' : 'mapping'} (Helm refuses it)`)
      out.set(k, keyText(key), this.unmarshal(value))
    }
    return out
  }

  private merge(node: unknown, out: GoMap): void {
    const isMapping = (n: unknown): boolean => isMap(isAlias(n) ? this.targets.get(n) : n)
    const wantMap = () => this.at(node, 'map merge requires map or sequence of maps as the value')
    if (isSeq(node)) {
      // Earlier maps take precedence: merged last.
      for (const item of [...node.items].reverse()) {
        if (!isMapping(item)) throw wantMap()
        this.unmarshal(item, out)
      }
    } else if (isMapping(node)) this.unmarshal(node, out)
    else throw wantMap()
  }

  document(doc: Document.Parsed): GoValue {
    this.decodes++
    return this.unmarshal(doc.contents)
  }
}

/** sigs.k8s.io/yaml's convertToJSONableObject and json.Marshal: keys become strings, or the document is refused. */
function toJSON(v: GoValue, path: string): unknown {
  const refuse = (why: string) => new Error(`${path ? `${path}: ` : ''}${why}`)
  if (Array.isArray(v)) return v.map((item, i) => toJSON(item, `${path}[${i}]`))
  if (!(v instanceof GoMap)) {
    const s = jsonScalar(v)
    if (s !== null && typeof s === 'object') throw refuse(`${s.refused}; Helm refuses it too`)
    return s
  }
  const out: Record<string, unknown> = {}
  const written = new Map<string, string>()
  for (const { key, text, value } of v.entries.values()) {
    const k = jsonKey(key)
    if (typeof k !== 'string') throw refuse(`${k.refused}; Helm refuses it too`)
    // Two Go keys, one JSON key: which value Helm keeps depends on Go's random map order.
    if (written.has(k)) throw refuse(`key '${k}' is given twice (as ${written.get(k)} and ${text}); Helm keeps either one, at random`)
    written.set(k, text)
    Object.defineProperty(out, k, { value: toJSON(value, `${path}.${k}`), enumerable: true, writable: true, configurable: true })
  }
  return out
}

/** The documents of `text` as Helm reads them; throws, naming the line, where Helm would fail. */
export function helmDocuments(text: string, firstLine = 1): HelmDocument[] {
  // apimachinery reads a text that starts with `{` as JSON first (where \/ is an escape YAML 1.1 lacks).
  if (/^\s*\{/.test(text)) {
    try {
      return [{ value: JSON.parse(text) as unknown, line: firstLine }]
    } catch {
      // Not one JSON object: YAML, as apimachinery falls back.
    }
  }
  const docs: HelmDocument[] = []
  let source: string | undefined
  for (const piece of pieces(text, firstLine)) {
    const sources = [...piece.text.matchAll(/^# Source: (.*?)\r?$/gm)].map((m) => m[1])
    const docSource = sources[0] ?? source
    source = sources.at(-1) ?? source
    const first = firstDocument(piece)
    if (!first) continue
    const { doc, parsed } = first
    const at = (node: unknown, message: string) => new Error(`line ${lineAt(parsed, isNode(node) ? (node.range?.[0] ?? 0) : 0)}: ${message}`)
    const decoded = new Decoder(aliasTargets(doc, parsed), at).document(doc)
    let value: unknown
    try {
      value = toJSON(decoded, '')
    } catch (e) {
      throw new Error(`the document at line ${piece.line}: ${(e as Error).message}`, { cause: e })
    }
    if (value !== null) docs.push({ value, source: docSource, line: piece.line })
  }
  return docs
}
