// The image (image/Containerfile) up to the point that needs an engine and a registry: the build
// context scripts/image.sh assembles holds the Containerfile and the bundled CLI, nothing else; the
// CLI runs from it alone; and the Containerfile pins its base by digest and runs as a non-root user.
import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..', '..')
const script = join(root, 'scripts', 'image.sh')

function imageScript(args: string[], env: Record<string, string> = {}): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(script, args, { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } })
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr }
}

const files = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort()

test('the build context holds the Containerfile and dist/cli under /opt/job-sweeper, nothing else, and the CLI runs from it alone', () => {
  const context = join(mkdtempSync(join(tmpdir(), 'image-')), 'context')
  const made = imageScript(['context', context])
  expect(made.stderr).toBe('')
  expect(made.code).toBe(0)
  expect(files(context)).toEqual([
    'Containerfile',
    'rootfs/opt/job-sweeper/index.js',
    'rootfs/opt/job-sweeper/job-sweeper.mjs',
    'rootfs/opt/job-sweeper/licenses.txt',
    'rootfs/opt/job-sweeper/package.json'
  ])
  expect(readFileSync(join(context, 'rootfs/opt/job-sweeper/index.js'))).toEqual(readFileSync(join(root, 'dist/cli/index.js')))

  // As the image runs it: Node and these files only, outside the repository (no node_modules
  // above it), from an empty working directory.
  const cwd = mkdtempSync(join(tmpdir(), 'image-cwd-'))
  const run = spawnSync(process.execPath, [join(context, 'rootfs/opt/job-sweeper/job-sweeper.mjs'), 'sweep', '--help'], {
    encoding: 'utf8',
    cwd,
    env: { PATH: '/usr/bin:/bin', HOME: cwd }
  })
  expect(run.stderr).toBe('')
  expect(run.status).toBe(0)
  expect(run.stdout).toContain('Usage: job-sweeper sweep [flags]')
})

test('a file the image should not hold fails the context, naming it (and the script reused on a directory it did not make refuses)', () => {
  const from = mkdtempSync(join(tmpdir(), 'image-from-'))
  cpSync(join(root, 'dist', 'cli'), from, { recursive: true })
  writeFileSync(join(from, 'index.js.map'), '{}')
  const context = join(mkdtempSync(join(tmpdir(), 'image-')), 'context')
  const made = imageScript(['context', context], { JOB_SWEEPER_IMAGE_FROM: from })
  expect(made.code).toBe(1)
  expect(made.stderr).toContain('> rootfs/opt/job-sweeper/index.js.map')

  const elsewhere = mkdtempSync(join(tmpdir(), 'image-not-a-context-'))
  writeFileSync(join(elsewhere, 'keep.txt'), 'mine')
  const refused = imageScript(['context', elsewhere])
  expect(refused.code).toBe(2)
  expect(refused.stderr).toContain('is not a build context this script made')
  expect(readFileSync(join(elsewhere, 'keep.txt'), 'utf8')).toBe('mine')
})

test('the Containerfile pins its base by digest, copies only the context’s CLI into an empty image, and runs as a non-root user', () => {
  const lines = readFileSync(join(root, 'image', 'Containerfile'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#'))
  const base = lines.find((l) => l.startsWith('ARG NODE_IMAGE='))
  expect(base).toMatch(/^ARG NODE_IMAGE=docker\.io\/library\/node:24-alpine@sha256:[0-9a-f]{64}$/)
  const from = lines.filter((l) => l.startsWith('FROM '))
  expect(from).toEqual(['FROM ${NODE_IMAGE} AS node', 'FROM scratch'])
  // What the final stage is made of: Node's stage, and the CLI from the context, nothing more.
  const final = lines.slice(lines.indexOf('FROM scratch'))
  expect(final.filter((l) => l.startsWith('COPY '))).toEqual(['COPY --from=node / /', 'COPY --chown=0:0 rootfs/opt/job-sweeper/ /opt/job-sweeper/'])
  expect(final.filter((l) => l.startsWith('RUN '))).toEqual([])
  expect(final.find((l) => l.startsWith('USER '))).toBe('USER 1000:1000')
  expect(final.find((l) => l.startsWith('ENTRYPOINT '))).toBe('ENTRYPOINT ["node", "/opt/job-sweeper/job-sweeper.mjs"]')
})
