// Label selectors, checked here as the API server's parser (apimachinery's labels.Parse) checks
// them, so that a typo is refused before the cluster is read instead of surfacing as an HTTP 400
// halfway through a run. Hand-written: no maintained npm package implements this grammar, and it
// is small — requirements separated by commas, each `key`, `!key`, `key=v`, `key==v`, `key!=v`,
// `key in (v1,v2)`, `key notin (v1,v2)`, `key>n` or `key<n`.

type Token = { kind: 'id' | 'op' | 'end'; text: string }

const OPERATORS = ['!=', '==', '!', '=', '(', ')', ',', '>', '<'] // longest first
const SPECIAL = /[!=(),<>\s]/

function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    if (/\s/.test(text[i])) {
      i++
      continue
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i))
    if (op !== undefined) {
      tokens.push({ kind: 'op', text: op })
      i += op.length
      continue
    }
    let j = i
    while (j < text.length && !SPECIAL.test(text[j])) j++
    tokens.push({ kind: 'id', text: text.slice(i, j) })
    i = j
  }
  tokens.push({ kind: 'end', text: '' })
  return tokens
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/

/** Why `key` is not a label key (an optional DNS-subdomain prefix and '/', then a name), if it is not. */
export function labelKeyProblem(key: string): string | undefined {
  const parts = key.split('/')
  const name = parts[parts.length - 1]
  if (parts.length > 2) return `label key '${key}' has more than one '/'`
  if (parts.length === 2 && (parts[0] === '' || parts[0].length > 253 || !DNS_SUBDOMAIN.test(parts[0])))
    return `the prefix of label key '${key}' must be a DNS subdomain (lowercase letters, digits, '-' and '.')`
  if (name.length > 63 || !NAME.test(name))
    return `label key '${key}' must be at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
  return undefined
}

/** Why `value` is not a label value (empty, or at most 63 letters, digits, '-', '_', '.'), if it is not. */
export function labelValueProblem(value: string): string | undefined {
  if (value === '' || (value.length <= 63 && NAME.test(value))) return undefined
  return `label value '${value}' must be at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
}

const shown = (t: Token): string => (t.kind === 'end' ? 'the end' : `'${t.text}'`)

/** Why `text` is not a label selector the API server accepts, or undefined when it is one. */
export function selectorProblem(text: string): string | undefined {
  const tokens = tokenize(text)
  let at = 0
  const peek = (): Token => tokens[at]
  const next = (): Token => tokens[at++]
  const isKeyword = (t: Token): boolean => t.kind === 'id' && (t.text === 'in' || t.text === 'notin')

  for (;;) {
    const start = next()
    let key = start
    if (start.kind === 'op' && start.text === '!') key = next()
    if (key.kind !== 'id' || isKeyword(key)) return `found ${shown(key)} where a label key belongs`
    const keyProblem = labelKeyProblem(key.text)
    if (keyProblem) return keyProblem
    if (start === key && !(peek().kind === 'end' || peek().text === ',')) {
      const op = next()
      const values: string[] = []
      if (op.text === 'in' || op.text === 'notin') {
        if (next().text !== '(') return `'${op.text}' takes a list in parentheses, like ${key.text} ${op.text} (a,b)`
        if (peek().text === ')') return `the list of '${key.text} ${op.text}' is empty`
        for (;;) {
          // As in labels.Parse: an empty item (`in (a,)`) is the empty value, and in/notin are values here.
          const t = peek().text === ',' || peek().text === ')' ? { kind: 'id', text: '' } : next()
          if (t.kind !== 'id') return `found ${shown(t as Token)} in the list of '${key.text} ${op.text}'`
          values.push(t.text)
          const sep = next()
          if (sep.text === ')') break
          if (sep.text !== ',') return `found ${shown(sep)} where ',' or ')' belongs in the list of '${key.text} ${op.text}'`
        }
      } else if (['=', '==', '!=', '>', '<'].includes(op.text) && op.kind === 'op') {
        const value = peek().kind === 'end' || peek().text === ',' ? { kind: 'id', text: '' } : next()
        if (value.kind !== 'id') return `found '${value.text}' where the value of '${key.text}' belongs`
        if ((op.text === '>' || op.text === '<') && !/^-?\d+$/.test(value.text)) return `'${key.text} ${op.text}' takes an integer`
        values.push(value.text)
      } else return `found ${shown(op)} after '${key.text}' where =, ==, !=, in, notin, > or < belongs`
      const valueProblem = values.map(labelValueProblem).find((p) => p !== undefined)
      if (valueProblem) return valueProblem
    }
    const end = next()
    if (end.kind === 'end') return undefined
    if (end.text !== ',') return `found ${shown(end)} where ',' or the end belongs`
  }
}
