// The layers of src/ (scripts/eslint-layers.js, run by `npm run lint`): the rule is seen to refuse
// a value import up the floors, and to let type imports and imports down the floors through.
import { join } from 'node:path'
import { ESLint } from 'eslint'

const root = join(import.meta.dirname, '..', '..')
const eslint = new ESLint({ cwd: root })

/** The layer rule's messages for `code` as if it were the file `path` (relative to the repository). */
async function layerMessages(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, path) })
  return result.messages.filter((m) => m.ruleId === 'job-sweeper/layers').map((m) => `${m.line}: ${m.message}`)
}

test('a value import up the floors fails lint, naming the import and the floors', async () => {
  const messages = await layerMessages('src/plan/example.ts', "import { headlineOf } from '../report/headline.ts'\nexport const h = headlineOf\n")
  expect(messages).toEqual([expect.stringMatching(/^1: '\.\.\/report\/headline\.ts': plan may not import values from report, a higher floor/)])
})

test('a value re-export up the floors fails too; a type-only one does not', async () => {
  expect(await layerMessages('src/kube/example.ts', "export { execute } from '../execute/execute.ts'\n")).toHaveLength(1)
  expect(await layerMessages('src/kube/example.ts', "export type { Plan } from '../plan/plan.ts'\n")).toEqual([])
})

test('type imports cross any way; value imports down the floors and on the same floor pass', async () => {
  const code = [
    "import type { Summary } from '../report/summary.ts'",
    "import { type Plan, type PlannedJob } from '../plan/plan.ts'",
    "import { cut } from '../text/shorten.ts'",
    "import { statusCode } from '../kube/errors.ts'",
    "import { podsOfJobs } from './observe.ts'",
    'export type T = [Summary, Plan, PlannedJob]',
    'export const f = [cut, statusCode, podsOfJobs]'
  ].join('\n')
  expect(await layerMessages('src/observe/example.ts', `${code}\n`)).toEqual([])
})

test('a file on no floor is named, so that a new folder gets its place', async () => {
  const messages = await layerMessages('src/helpers/example.ts', "import { cut } from '../text/shorten.ts'\nexport const c = cut\n")
  expect(messages).toEqual([expect.stringContaining('helpers/example.ts is on no floor: add it to FLOORS in scripts/eslint-layers.js')])
})

test('no circle of imports between the folders of src/, type imports included; a circle is named', async () => {
  const { importCircle, srcImportGraph } = await import('../../scripts/eslint-layers.js')
  expect(importCircle(srcImportGraph())).toBeUndefined()
  // The control: the circle preflight and run.ts made (a type import one way, a value import back).
  const edges = new Map([
    ['run.ts', new Set(['preflight', 'kube'])],
    ['preflight', new Set(['kube', 'run.ts'])],
    ['kube', new Set(['settings'])]
  ])
  expect(importCircle(edges)).toBe('preflight → run.ts → preflight')
})
