// The manifest read as Helm reads it (src/settings/helm-yaml.ts), checked against the real thing:
// fixtures/helm-yaml.json holds, case by case, what k8s.io/apimachinery's YAML decoder over
// sigs.k8s.io/yaml v1.6.0 and go-yaml v2.4.4 (Helm 4.3.2's and 3.21.4's) made of each text
// (fixtures/helm-yaml.md: how). Issue 24: `defaultMode: 0755` is 493 for Helm, and was 755 for us.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { helmDocuments } from '../../src/settings/helm-yaml.ts'

interface Case {
  name: string
  yaml: string
  docs?: unknown[]
  error?: string
}
const { cases } = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'helm-yaml.json'), 'utf8')) as { cases: Case[] }

const values = (text: string): unknown[] => helmDocuments(text).map((d) => d.value)

// Where we do not read what Helm reads, and why: we refuse the text, never read it otherwise.
const NOT_MATCHED: Record<string, string> = {
  'documents: JSON stream (not matched)': 'JSON objects back to back: apimachinery reads a stream of them; we read one JSON object, or YAML'
}

describe('each case of fixtures/helm-yaml.json reads as Helm read it', () => {
  test.each(cases.filter((c) => !(c.name in NOT_MATCHED)).map((c) => [c.name, c] as const))('%s', (_name, c) => {
    if (c.error !== undefined) expect(() => values(c.yaml)).toThrow()
    else expect(values(c.yaml)).toEqual(c.docs)
  })

  test.each(Object.entries(NOT_MATCHED))('not matched, refused: %s (%s)', (name) => {
    const c = cases.find((x) => x.name === name)
    expect(c?.docs).toBeDefined()
    expect(() => values(c?.yaml ?? '')).toThrow()
  })
})

// The points where YAML 1.2 (js-yaml, before) and the yaml package's own YAML 1.1 schema read
// otherwise than Helm: each is a case of the fixture too.
test.each([
  ['octal file mode 0755 → 493', 'defaultMode: 0755', { defaultMode: 493 }],
  ["Go's own integers: 0o755, 0x1F, 0b101, 1_000", 'a: 0o755\nb: 0x1F\nc: 0b101\nd: 1_000', { a: 493, b: 31, c: 5, d: 1000 }],
  ['YAML 1.1 booleans: yes, on, off, n', 'a: yes\nb: on\nc: off\nd: n', { a: true, b: true, c: false, d: false }],
  ['sexagesimal 1:30 stays text', 'v: 1:30', { v: '1:30' }],
  ['a date stays text', 'v: 2001-12-14', { v: '2001-12-14' }],
  ['1e3 is a number', 'v: 1e3', { v: 1000 }],
  ['map keys as JSON keys: yes → "true", 0755 → "493", 1.5e7 → "1.5e+07"', 'yes: a\n0755: b\n1.5e7: c', { true: 'a', 493: 'b', '1.5e+07': 'c' }],
  ['a merged key overwrites one written before <<', 'b: &b {a: 1}\nv:\n  a: 9\n  <<: *b', { b: { a: 1 }, v: { a: 1 } }],
  ['a duplicate key: the last one', 'a: 1\na: 2', { a: 2 }]
])('%s', (_name, text, expected) => {
  expect(values(text)).toEqual([expected])
})

test('two keys that make one JSON key are refused, naming both: Helm keeps either, at random', () => {
  expect(() => values('data:\n  1: a\n  "1": b\n')).toThrow(`.data: key '1' is given twice (as 1 and "1"); Helm keeps either one, at random`)
  expect(() => values('true: a\nyes: b\n')).not.toThrow()
})

test("an error names the line in the whole text, and Helm's own words where it has them", () => {
  expect(() => values('a: 1\n---\nb: 2\nc: [\n')).toThrow(/^line 5: /)
  expect(() => values('a: 1\n---\nv: !!int 1.5\n')).toThrow('line 3: cannot decode !!float `1.5` as a !!int')
  expect(() => values('a: 1\n---\nv: .inf\n')).toThrow('the document at line 3: .v: json: unsupported value: +Inf; Helm refuses it too')
  expect(() => helmDocuments('v: [\n', 40)).toThrow(/^line 41: /)
})

test('each document carries the # Source: path Helm wrote before its file; a later document of a file keeps it', () => {
  const text = ['---', '# Source: c/crds/two.yaml', 'a: 1', '---', 'b: 2', '---', '# Source: c/templates/x.yaml', 'c: 3', '---', '# empty'].join('\n')
  expect(helmDocuments(text).map((d) => [d.source, d.line])).toEqual([
    ['c/crds/two.yaml', 2],
    ['c/crds/two.yaml', 5],
    ['c/templates/x.yaml', 7]
  ])
  expect(helmDocuments('a: 1\n')[0].source).toBeUndefined()
})
