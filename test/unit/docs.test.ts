// action.yml, the README's tables and the code's input table must agree.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadYaml } from '@kubernetes/client-node'
import { INPUT } from '../../src/settings/settings.ts'

const root = join(import.meta.dirname, '..', '..')
const action = loadYaml<{ inputs: Record<string, { default?: string }>; outputs: Record<string, unknown> }>(readFileSync(join(root, 'action.yml'), 'utf8'))
const readme = readFileSync(join(root, 'README.md'), 'utf8')

/** Rows of the first table under `## heading`: first cell (backticks stripped) → second cell. */
function table(heading: string): Map<string, string> {
  const section = readme.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0] ?? ''
  const rows = section.split('\n').filter((l) => /^\| `/.test(l))
  return new Map(rows.map((r) => r.split('|').map((c) => c.trim())).map((cells) => [cells[1].replace(/`/g, ''), cells[2].replace(/`/g, '')]))
}

test('every input in action.yml is in the README table, with the same default, and nothing else is', () => {
  const documented = table('Inputs')
  expect([...documented.keys()].sort()).toEqual(Object.keys(action.inputs).sort())
  for (const [name, input] of Object.entries(action.inputs)) {
    if (input.default !== undefined) expect([name, documented.get(name)]).toEqual([name, String(input.default)])
  }
})

test('every output in action.yml is in the README table, and nothing else is', () => {
  expect([...table('Outputs').keys()].sort()).toEqual(Object.keys(action.outputs).sort())
})

test('the code reads exactly the inputs action.yml declares', () => {
  expect(Object.values(INPUT).sort()).toEqual(Object.keys(action.inputs).sort())
})

test('every file in examples/ (and its folders) is shown in the README, word for word', () => {
  const examples = readdirSync(join(root, 'examples'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile())
  expect(examples.length).toBeGreaterThan(0)
  for (const file of examples) {
    const name = join(file.parentPath, file.name).slice(root.length + 1)
    const text = readFileSync(join(root, name), 'utf8').trimEnd()
    expect([name, readme.includes(`\`\`\`yaml\n${text}\n\`\`\``)]).toEqual([name, true])
  }
})
