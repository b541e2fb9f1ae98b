// The npm package as users get it: `npm pack`, installed from the tarball alone — into an empty
// prefix, with an empty npm cache and no network, so it can reach nothing of this repository's —
// and its command run on Node 24: --help, the npx form, and a real pre --dry-run on the cluster.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { getJob, testCluster } from './cluster/testenv.ts'
import { runCommand, type CommandRun } from './command.ts'
import { helmChart, release, useScenario } from './scenario.ts'

const root = join(import.meta.dirname, '..')
/** Bounds on what `npm install job-sweeper` downloads and unpacks (today ~1.4 MB and ~5.2 MB). */
const MAX_PACKED_BYTES = 2_000_000
const MAX_UNPACKED_BYTES = 16_000_000

interface Packed {
  filename: string
  size: number
  unpackedSize: number
  files: { path: string }[]
}

let work: string
let packed: Packed
let tarball: string
let prefix: string
/** Node 24 (the one running jest) first on PATH, then the system's tools; nothing of the repo. */
let userEnv: Record<string, string>

/** npm, offline with an empty cache: whatever it would have to download fails (ENOTCACHED). */
const npm = (command: string, ...args: string[]): Promise<CommandRun> =>
  runCommand(
    'npm',
    [command, '--offline', '--no-audit', '--no-fund', '--no-update-notifier', ...args],
    { ...userEnv, npm_config_cache: join(work, 'empty-cache') },
    work
  )

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'job-sweeper-pack-'))
  const pack = await runCommand('npm', ['pack', '--json', '--pack-destination', work], { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, root)
  expect(pack.code).toBe(0)
  ;[packed] = JSON.parse(pack.stdout) as Packed[]
  tarball = join(work, packed.filename)
  const home = join(work, 'home')
  mkdirSync(home)
  userEnv = { PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`, HOME: home }
  prefix = join(work, 'prefix')
  const install = await npm('install', '--global', '--prefix', prefix, tarball)
  expect(install.stderr).not.toContain('ERR')
  expect(install.code).toBe(0)
})

afterAll(() => rmSync(work, { recursive: true, force: true }))

test('the tarball holds dist/, action.yml, README, LICENSE and package.json only, and stays small', () => {
  const paths = packed.files.map((f) => f.path).sort()
  expect(paths.filter((p) => !p.startsWith('dist/') && !['action.yml', 'README.md', 'LICENSE', 'package.json'].includes(p))).toEqual([])
  expect(paths).toEqual(
    expect.arrayContaining(['LICENSE', 'README.md', 'action.yml', 'dist/cli/job-sweeper.mjs', 'dist/cli/index.js', 'dist/index.js', 'package.json'])
  )
  // upload-logs' client is the action's alone (the repository's dist/ has it; the CLI never loads it).
  expect(paths.filter((p) => p.includes('artifact'))).toEqual([])
  expect(packed.size).toBeLessThan(MAX_PACKED_BYTES)
  expect(packed.unpackedSize).toBeLessThan(MAX_UNPACKED_BYTES)
})

test('installed from the tarball alone: no dependency (not even a Node) fetched, and job-sweeper --help runs on Node 24', async () => {
  const installed = join(prefix, 'lib', 'node_modules', 'job-sweeper')
  expect(existsSync(join(installed, 'dist', 'cli', 'job-sweeper.mjs'))).toBe(true)
  expect(existsSync(join(installed, 'node_modules'))).toBe(false)
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>
  expect([manifest.dependencies, manifest.optionalDependencies, manifest.peerDependencies]).toEqual([undefined, undefined, undefined])
  expect(manifest.engines).toEqual({ node: '>=22.19' }) // what dist/cli/job-sweeper.mjs checks
  expect((await runCommand('node', ['--version'], userEnv)).stdout).toMatch(/^v24\./)

  const help = await runCommand(join(prefix, 'bin', 'job-sweeper'), ['--help'], userEnv, work)
  expect(help.stderr).toBe('')
  expect(help.code).toBe(0)
  expect(help.stdout).toContain('Usage: job-sweeper <command> [flags]')
})

test('the npx form runs the package’s bin', async () => {
  // What `npx --yes job-sweeper@0 …` does, with the tarball standing in for the registry's copy.
  const help = await npm('exec', '--yes', `--package=${tarball}`, '--', 'job-sweeper', 'sweep', '--help')
  expect(help.code).toBe(0)
  expect(help.stdout).toContain('Usage: job-sweeper sweep [flags]')
})

describe('against the cluster', () => {
  const scenario = useScenario('pack')

  test('the installed command plans a real pre --dry-run and changes nothing', async () => {
    const ns = scenario.ns
    expect(helmChart('install', ns, { hookJob: false }, '--wait', '--wait-for-jobs').code).toBe(0)
    const before = await getJob(ns, `${release}-migrate`)
    const env = { ...userEnv, KUBECONFIG: testCluster().kubeconfig }
    const run = await runCommand(join(prefix, 'bin', 'job-sweeper'), ['pre', '--release', release, '--namespace', ns, '--dry-run', '--json'], env, work)
    expect(run.code).toBe(0)
    const result = JSON.parse(run.stdout) as { dryRun: boolean; pruned: { name: string }[]; errors: string[] }
    expect(result.dryRun).toBe(true)
    expect(result.errors).toEqual([])
    expect(result.pruned.map((j) => j.name)).toEqual([`${release}-migrate`])
    expect((await getJob(ns, `${release}-migrate`))?.metadata?.uid).toBe(before?.metadata?.uid)
  })
})
