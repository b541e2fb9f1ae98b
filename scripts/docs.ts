// Writes the README's inputs and outputs tables from action.yml, the one place they are declared
// (as actions/checkout generates its usage block): `npm run docs`. test/unit/docs.test.ts fails
// when README.md differs from what this writes.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { load } from 'js-yaml'
import { format, resolveConfig } from 'prettier'

export interface ActionMetadata {
  inputs: Record<string, { description: string; default?: string }>
  outputs: Record<string, { description: string }>
}

const root = join(import.meta.dirname, '..')
export const README = join(root, 'README.md')

export function readAction(): ActionMetadata {
  return load(readFileSync(join(root, 'action.yml'), 'utf8')) as ActionMetadata
}

/** A table cell: one line, pipes escaped. */
const cell = (text: string) => text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|')

function table(header: string[], rows: string[][]): string {
  return [header, header.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n')
}

export function inputsTable(action: ActionMetadata): string {
  return table(
    ['Input', 'Default', 'Description'],
    // Each name links to its section of docs/inputs.md: the depth a one-sentence description leaves out.
    Object.entries(action.inputs).map(([name, input]) => [
      `[\`${name}\`](docs/inputs.md#${name})`,
      input.default ? `\`${cell(String(input.default))}\`` : '',
      cell(input.description)
    ])
  )
}

export function outputsTable(action: ActionMetadata): string {
  return table(
    ['Output', 'Description'],
    Object.entries(action.outputs).map(([name, output]) => [`\`${name}\``, cell(output.description)])
  )
}

/** `text` with what lies between `<!-- start NAME … -->` and `<!-- end NAME -->` replaced by `content`. */
function between(text: string, name: string, content: string): string {
  const marker = new RegExp(`(<!-- start ${name}\\b[^>]*-->\\n)[\\s\\S]*?(<!-- end ${name} -->)`)
  if (!marker.test(text)) throw new Error(`README.md has no '<!-- start ${name} … -->' … '<!-- end ${name} -->' markers`)
  return text.replace(marker, (_, start: string, end: string) => `${start}\n${content}\n\n${end}`)
}

/** The README as `npm run docs` writes it: the tables from action.yml, formatted by Prettier. */
export async function renderReadme(readme: string, action: ActionMetadata): Promise<string> {
  const text = between(between(readme, 'inputs', inputsTable(action)), 'outputs', outputsTable(action))
  return format(text, { ...(await resolveConfig(README)), filepath: README })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const readme = readFileSync(README, 'utf8')
  const written = await renderReadme(readme, readAction())
  if (written !== readme) writeFileSync(README, written)
  console.log(written === readme ? 'README.md is up to date with action.yml' : 'README.md: inputs and outputs written from action.yml')
}
