// action.yml declares the interface once: the README's tables are written from it (npm run docs),
// and the code's inputs and outputs and the CLI's usage text must agree with it.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, posix } from 'node:path'
import { loadAll } from 'js-yaml'
import { readAction, renderReadme, README } from '../../scripts/docs.ts'
import { usage } from '../../src/cli/args.ts'
import { preflightOutputs } from '../../src/preflight/action.ts'
import type { PreflightResult } from '../../src/preflight/report.ts'
import { writeReport } from '../../src/report/write.ts'
import { ACTION_ONLY, HARVEST_LOGS, INPUT, ON_LOG_FAILURE, ON_RUNNING, PHASES, PREFLIGHT_GATES } from '../../src/settings/settings.ts'

const root = join(import.meta.dirname, '..', '..')
const action = readAction()
const readme = readFileSync(README, 'utf8')

test('README.md is what npm run docs writes from action.yml (its inputs and outputs tables)', async () => {
  const expected = await renderReadme(readme, action)
  const line = readme.split('\n').findIndex((l, i) => l !== expected.split('\n')[i])
  const differs = line < 0 ? 'in sync' : `README.md line ${line + 1} differs from action.yml: run npm run docs`
  expect(differs).toBe('in sync')
})

/** Rows of the first table under `## heading`: first cell (backticks stripped) → second cell. */
function table(heading: string): Map<string, string> {
  const section = readme.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0] ?? ''
  const rows = section.split('\n').filter((l) => /^\| \[?`/.test(l))
  // A name may link to its section of docs/inputs.md: [`name`](docs/inputs.md#name).
  const name = (cell: string) => cell.replace(/^\[(.*)\]\(.*\)$/, '$1').replace(/`/g, '')
  return new Map(rows.map((r) => r.split('|').map((c) => c.trim())).map((cells) => [name(cells[1]), cells[2].replace(/`/g, '')]))
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

test("action.yml's descriptions are a sentence or two (at most 300 characters), and each input has its section in docs/inputs.md", () => {
  const long = [...Object.entries(action.inputs), ...Object.entries(action.outputs)]
    .filter(([, { description }]) => description.length > 300)
    .map(([name, { description }]) => `${name}: ${description.length}`)
  expect(long).toEqual([])
  const sections = readFileSync(join(root, 'docs', 'inputs.md'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('## '))
    .map((l) => l.slice(3).replace(/`/g, ''))
  expect(Object.keys(action.inputs).filter((name) => !sections.includes(name))).toEqual([])
})

test('the code reads exactly the inputs action.yml declares', () => {
  expect(Object.values(INPUT).sort()).toEqual(Object.keys(action.inputs).sort())
})

test('the code sets exactly the outputs action.yml declares', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'job-sweeper-outputs-'))
  const saved = { output: process.env.GITHUB_OUTPUT, summary: process.env.GITHUB_STEP_SUMMARY }
  try {
    process.env.GITHUB_OUTPUT = join(dir, 'output')
    process.env.GITHUB_STEP_SUMMARY = join(dir, 'summary')
    for (const file of [process.env.GITHUB_OUTPUT, process.env.GITHUB_STEP_SUMMARY]) writeFileSync(file, '')
    await writeReport({ phase: 'post', namespace: 'prod', dryRun: false, outcomes: [], errors: [], warnings: [] }, join(dir, 'logs'))
    const set = [...readFileSync(process.env.GITHUB_OUTPUT, 'utf8').matchAll(/^([\w-]+)<<ghadelimiter_/gm)].map((m) => m[1])
    // phase: preflight sets its own (and report-file, which the Job phases set too).
    const preflight = { namespace: 'prod', verdicts: [], blocked: [], hooks: [], warnings: [] } as unknown as PreflightResult
    expect([...new Set([...set, ...Object.keys(preflightOutputs(preflight, '/tmp/report.json'))])].sort()).toEqual(Object.keys(action.outputs).sort())
  } finally {
    for (const [name, value] of [
      ['GITHUB_OUTPUT', saved.output],
      ['GITHUB_STEP_SUMMARY', saved.summary]
    ] as const)
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    rmSync(dir, { recursive: true, force: true })
  }
})

// The CLI's usage text words each flag shorter than action.yml does (a terminal line each); these
// tests hold it to action.yml on what must not drift: the names, the defaults and the choices.
/** The CLI's own flags, not inputs: --json, and --kubeconfig-env (a kubeconfig kept off the command line). */
const CLI_ONLY = ['json', 'kubeconfig-env']
/** The input the CLI takes as its command rather than a flag. */
const COMMAND = INPUT.phase

/** Every flag line of the usage texts: name → its text (continuation lines joined). */
function cliFlags(): Map<string, string> {
  const flags = new Map<string, string>()
  for (const text of [usage(), ...PHASES.map((p) => usage(p))]) {
    let last: string | undefined
    for (const line of text.split('\n')) {
      const flag = /^ {2}(?:or: )?(?:-[a-zA-Z], )?--([a-z0-9-]+)\b(.*)$/.exec(line)
      if (flag) flags.set((last = flag[1]), `${flags.get(flag[1]) ?? ''} ${flag[2].trim()}`)
      else if (last && /^ {20,}\S/.test(line)) flags.set(last, `${flags.get(last)} ${line.trim()}`)
      else last = undefined
    }
  }
  return flags
}

test("the CLI's flags are action.yml's inputs (the phase is the command; upload-logs is the action's) and its own --json and --kubeconfig-env", () => {
  const flags = [...cliFlags().keys()].filter((f) => !CLI_ONLY.includes(f))
  expect(ACTION_ONLY).toEqual([INPUT.uploadLogs])
  expect(flags.sort()).toEqual(
    Object.keys(action.inputs)
      .filter((name) => name !== COMMAND && !ACTION_ONLY.includes(name))
      .sort()
  )
  for (const phase of PHASES) expect([phase, new RegExp(`^  ${phase} `, 'm').test(usage())]).toEqual([phase, true])
})

test("the CLI's usage states action.yml's default for every input that has one (booleans default to false, as a bare flag is true)", () => {
  const flags = cliFlags()
  for (const [name, input] of Object.entries(action.inputs)) {
    if (name === COMMAND || ACTION_ONLY.includes(name) || input.default === undefined || input.default === 'false') continue
    const text = flags.get(name) ?? ''
    // "(default 10m", "(default: KUBECONFIG" or "failed (default)".
    const stated = /\(default:? ([^\s:),]+)/.exec(text)?.[1] ?? /(\S+) \(default\)/.exec(text)?.[1]
    expect([name, stated]).toEqual([name, input.default])
  }
})

test("the choices of the code's keyword inputs are named in action.yml and in the CLI's usage", () => {
  const flags = cliFlags()
  const choices: [string, readonly string[]][] = [
    [INPUT.onRunning, ON_RUNNING],
    [INPUT.harvestLogs, HARVEST_LOGS],
    [INPUT.onLogFailure, ON_LOG_FAILURE],
    [INPUT.preflight, PREFLIGHT_GATES],
    [INPUT.phase, PHASES]
  ]
  for (const [name, values] of choices)
    for (const value of values) {
      expect([name, value, action.inputs[name].description.includes(`\`${value}\``)]).toEqual([name, value, true])
      const cli = name === COMMAND ? usage() : (flags.get(name) ?? '')
      expect([name, value, new RegExp(`\\b${value}\\b`).test(cli)]).toEqual([name, value, true])
    }
})

/** README.md, CONTRIBUTING.md, the chart's README and docs/*.md: path from the root → text. */
const pages = new Map(
  [
    'README.md',
    'CONTRIBUTING.md',
    'charts/job-sweeper/README.md',
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
