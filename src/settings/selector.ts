// Label selectors, parsed here as the API server's parser (apimachinery's labels.Parse) parses
// them, so that a typo is refused before the cluster is read instead of surfacing as an HTTP 400
// halfway through a run, and so that a fresh copy of a Job read before a delete is matched by the
// same rules the list was (labels.Requirement.Matches). Hand-written: no maintained npm package
// implements this grammar, and it is small — requirements separated by commas, each `key`,
// `!key`, `key=v`, `key==v`, `key!=v`, `key in (v1,v2)`, `key notin (v1,v2)`, `key>n` or `key<n`.

import { labelKeyProblem, labelValueProblem } from './names.ts'

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

const shown = (t: Token): string => (t.kind === 'end' ? 'the end' : `'${t.text}'`)

/** One requirement of a selector: `exists` is `key`, `!` is `!key`; `==` is `=`. */
export interface Requirement {
  key: string
  operator: 'exists' | '!' | '=' | '!=' | 'in' | 'notin' | '>' | '<'
  values: string[]
}

/** A parsed label selector (every requirement must hold), or why the text is not one. */
export type ParsedSelector = { requirements: Requirement[]; problem?: undefined } | { requirements?: undefined; problem: string }

/** Parses `text` as the API server does: its requirements, or why it is not a label selector. */
export function parseSelector(text: string): ParsedSelector {
  const tokens = tokenize(text)
  let at = 0
  const peek = (): Token => tokens[at]
  const next = (): Token => tokens[at++]
  const isKeyword = (t: Token): boolean => t.kind === 'id' && (t.text === 'in' || t.text === 'notin')
  const fail = (problem: string): ParsedSelector => ({ problem })
  const requirements: Requirement[] = []

  for (;;) {
    const start = next()
    let key = start
    if (start.kind === 'op' && start.text === '!') key = next()
    if (key.kind !== 'id' || isKeyword(key)) return fail(`found ${shown(key)} where a label key belongs`)
    const keyProblem = labelKeyProblem(key.text)
    if (keyProblem) return fail(keyProblem)
    if (start === key && !(peek().kind === 'end' || peek().text === ',')) {
      const op = next()
      const values: string[] = []
      if (op.text === 'in' || op.text === 'notin') {
        if (next().text !== '(') return fail(`'${op.text}' takes a list in parentheses, like ${key.text} ${op.text} (a,b)`)
        if (peek().text === ')') return fail(`the list of '${key.text} ${op.text}' is empty`)
        for (;;) {
          // As in labels.Parse: an empty item (`in (a,)`) is the empty value, and in/notin are values here.
          const t = peek().text === ',' || peek().text === ')' ? { kind: 'id', text: '' } : next()
          if (t.kind !== 'id') return fail(`found ${shown(t as Token)} in the list of '${key.text} ${op.text}'`)
          values.push(t.text)
          const sep = next()
          if (sep.text === ')') break
          if (sep.text !== ',') return fail(`found ${shown(sep)} where ',' or ')' belongs in the list of '${key.text} ${op.text}'`)
        }
      } else if (['=', '==', '!=', '>', '<'].includes(op.text) && op.kind === 'op') {
        const value = peek().kind === 'end' || peek().text === ',' ? { kind: 'id', text: '' } : next()
        if (value.kind !== 'id') return fail(`found '${value.text}' where the value of '${key.text}' belongs`)
        if ((op.text === '>' || op.text === '<') && !/^-?\d+$/.test(value.text)) return fail(`'${key.text} ${op.text}' takes an integer`)
        values.push(value.text)
      } else return fail(`found ${shown(op)} after '${key.text}' where =, ==, !=, in, notin, > or < belongs`)
      const valueProblem = values.map(labelValueProblem).find((p) => p !== undefined)
      if (valueProblem) return fail(valueProblem)
      const operator = op.text === '==' ? '=' : (op.text as Requirement['operator'])
      requirements.push({ key: key.text, operator, values })
    } else requirements.push({ key: key.text, operator: start === key ? 'exists' : '!', values: [] })
    const end = next()
    if (end.kind === 'end') return { requirements }
    if (end.text !== ',') return fail(`found ${shown(end)} where ',' or the end belongs`)
  }
}

/** Why `text` is not a label selector the API server accepts, or undefined when it is one. */
export function selectorProblem(text: string): string | undefined {
  return parseSelector(text).problem
}

/** Whether `labels` satisfy the requirement, as labels.Requirement.Matches decides. */
function satisfies(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key)
  const value = has ? labels[r.key] : undefined
  switch (r.operator) {
    case 'exists':
      return has
    case '!':
      return !has
    case '=':
    case 'in':
      return value !== undefined && r.values.includes(value)
    case '!=':
    case 'notin':
      return value === undefined || !r.values.includes(value)
    case '>':
    case '<': {
      // A value that is not an integer matches neither.
      if (value === undefined || !/^[-+]?\d+$/.test(value)) return false
      const [have, bound] = [BigInt(value), BigInt(r.values[0])]
      return r.operator === '>' ? have > bound : have < bound
    }
  }
}

// Parsed once per selector: a plan decides on thousands of Jobs with the same one.
const parsedSelectors = new Map<string, ParsedSelector>()

/**
 * Whether a Job's `labels` match the label selector `text` (a selector that does not parse,
 * which settings refuse before the cluster is read, matches nothing).
 */
export function matchesSelector(text: string, labels: Record<string, string> | undefined): boolean {
  let parsed = parsedSelectors.get(text)
  if (parsed === undefined) {
    parsed = parseSelector(text)
    parsedSelectors.set(text, parsed)
  }
  const own = labels ?? {}
  return parsed.requirements !== undefined && parsed.requirements.every((r) => satisfies(r, own))
}
