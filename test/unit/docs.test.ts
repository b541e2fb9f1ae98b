// action.yml, the README's tables and the code's input table must agree.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, posix } from 'node:path'
import { loadAll } from 'js-yaml'
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

/** README.md, CONTRIBUTING.md and docs/*.md: path from the root → text. */
const pages = new Map(
  [
    'README.md',
    'CONTRIBUTING.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`)
  ].map((p) => [p, readFileSync(join(root, p), 'utf8')])
)

/** The relative links of a page, outside code blocks: target path from the root, and #anchor. */
function links(page: string): { path: string; anchor?: string }[] {
  const prose = pages.get(page)!.replace(/^```[\s\S]*?^```/gm, '')
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^[a-z]+:/.test(target))
    .map((target) => {
      const [file, anchor] = target.split('#')
      return { path: file === '' ? page : posix.normalize(posix.join(posix.dirname(page), file)), anchor }
    })
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')

test('every file in examples/ (and its folders) is linked from the README or docs/, and is valid YAML', () => {
  const examples = readdirSync(join(root, 'examples'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile())
  expect(examples.length).toBeGreaterThan(0)
  const linked = new Set([...pages.keys()].filter((p) => p !== 'CONTRIBUTING.md').flatMap((p) => links(p).map((l) => l.path)))
  for (const file of examples) {
    const name = join(file.parentPath, file.name).slice(root.length + 1)
    expect([name, linked.has(name)]).toEqual([name, true])
    const documents = loadAll(readFileSync(join(root, name), 'utf8'))
    expect([name, documents.length > 0 && documents.every((d) => typeof d === 'object' && d !== null)]).toEqual([name, true])
  }
})

test('no example is pasted into a page, so there is no second copy to go stale', () => {
  const examples = readdirSync(join(root, 'examples'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile())
  for (const file of examples) {
    // Its first non-comment line and the one after: a fragment no hand-written snippet repeats.
    const lines = readFileSync(join(file.parentPath, file.name), 'utf8').split('\n')
    const start = lines.findIndex((l) => l.trim() !== '' && !l.startsWith('#'))
    const fragment = lines.slice(start, start + 4).join('\n')
    for (const [page, text] of pages) expect([file.name, page, text.includes(fragment)]).toEqual([file.name, page, false])
  }
})

test('every relative link in the README, CONTRIBUTING.md and docs/ points to a file, and its #anchor to a heading there', () => {
  const checked = [...pages.keys()].flatMap((page) => links(page).map((link) => ({ page, ...link })))
  expect(checked.length).toBeGreaterThan(20)
  for (const { page, path, anchor } of checked) {
    expect([page, path, existsSync(join(root, path))]).toEqual([page, path, true])
    if (anchor === undefined) continue
    const headings = (pages.get(path) ?? '').split('\n').filter((l) => /^#+ /.test(l))
    expect([page, `${path}#${anchor}`, headings.some((h) => slug(h.replace(/^#+ /, '')) === anchor)]).toEqual([page, `${path}#${anchor}`, true])
  }
})
