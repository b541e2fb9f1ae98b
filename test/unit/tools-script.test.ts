// scripts/tools.sh, the install step .ci/run and test/cluster/build.sh share, run by bash against
// fake `id`, `sudo`, `apt-get` and `go` first on PATH that record how they were called: apt-get
// directly as root, through `sudo -n` where sudo needs no password (GitHub's hosted runners),
// nothing at all where nothing is missing, and a line naming the command elsewhere.
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const TOOLS = resolve('scripts/tools.sh')
let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tools-sh-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

interface Fakes {
  uid: number
  /** `sudo -n true` succeeds (passwordless), or fails as a sudo that wants a password does. */
  sudo?: 'passwordless' | 'password'
  goVersion?: string
}

/** Runs `script` in bash after sourcing tools.sh, with the fakes first on PATH; returns its exit code, stderr and the calls made. */
function run(script: string, fakes: Fakes): { code: number | null; stderr: string; calls: string[] } {
  const at = mkdtempSync(join(dir, 'run-'))
  const bin = join(at, 'bin')
  const log = join(at, 'calls')
  writeFileSync(log, '')
  const fake = (name: string, body: string): void => {
    writeFileSync(join(bin, name), `#!/bin/bash\necho "${name} $*" >> '${log}'\n${body}\n`)
    chmodSync(join(bin, name), 0o755)
  }
  // Only the fakes, `env` and `true` on PATH: a real sudo on this machine is never reached.
  const sys = join(at, 'sys')
  mkdirSync(bin)
  mkdirSync(sys)
  for (const tool of ['env', 'true']) symlinkSync(`/usr/bin/${tool}`, join(sys, tool))
  fake('id', `[ "$1" = -u ] && echo ${fakes.uid}`)
  if (fakes.sudo) fake('sudo', fakes.sudo === 'password' ? 'exit 1' : '[ "$1" = -n ] && shift; exec "$@"')
  fake('apt-get', 'exit 0')
  if (fakes.goVersion) fake('go', `[ "$1 $2" = "env GOVERSION" ] && echo ${fakes.goVersion}`)
  const r = spawnSync('/bin/bash', ['-c', `set -euo pipefail; source '${TOOLS}'; ${script}`], {
    encoding: 'utf8',
    env: { PATH: `${bin}:${sys}`, HOME: dir }
  })
  const calls = readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('id '))
  return { code: r.status, stderr: r.stderr, calls }
}

const INSTALL = ['apt-get update -qq', 'apt-get install -y -qq --no-install-recommends chromium unzip']

test('as root: apt-get itself, no sudo', () => {
  const r = run('install_packages chromium unzip', { uid: 0, sudo: 'passwordless' })
  expect([r.code, r.calls]).toEqual([0, INSTALL])
})

test('not root, passwordless sudo (a GitHub-hosted runner): apt-get through sudo -n', () => {
  const r = run('install_packages chromium unzip', { uid: 1001, sudo: 'passwordless' })
  expect([r.code, r.calls]).toEqual([
    0,
    [
      'sudo -n true',
      'sudo -n env DEBIAN_FRONTEND=noninteractive apt-get update -qq',
      INSTALL[0],
      'sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium unzip',
      INSTALL[1]
    ]
  ])
  expect(r.stderr).toContain("installing Debian's chromium unzip (with sudo)")
})

test('not root, a sudo that wants a password: nothing installed, one line with the command that would', () => {
  const r = run('install_packages chromium unzip', { uid: 1001, sudo: 'password' })
  expect([r.code, r.calls]).toEqual([1, ['sudo -n true']])
  expect(r.stderr.trim()).toBe('not installed (not root, no passwordless sudo): chromium unzip; get them with: sudo apt-get install chromium unzip')
})

test('not root, no sudo at all: the same line, nothing called', () => {
  const r = run('install_packages unzip', { uid: 1001 })
  expect([r.code, r.calls]).toEqual([1, []])
  expect(r.stderr).toContain('get them with: sudo apt-get install unzip')
})

test('nothing missing: neither sudo nor apt-get is called', () => {
  for (const uid of [0, 1001]) {
    const r = run('missing_packages() { echo; }; install_groups tests node', { uid, sudo: 'passwordless' })
    expect([uid, r.code, r.calls]).toEqual([uid, 0, []])
  }
})

test('a group still missing after the install fails and names what is missing', () => {
  const r = run('missing_packages() { echo gcc libc6-dev; }; install_groups node', { uid: 1001, sudo: 'password' })
  expect(r.code).toBe(1)
  expect(r.stderr).toContain('still missing: gcc libc6-dev')
})

test('Go older than 1.26 (GOTOOLCHAIN=local): a message that names the version found and the one needed', () => {
  const r = run('require_go', { uid: 0, goVersion: 'go1.25.4' })
  expect(r.code).toBe(1)
  expect(r.stderr).toMatch(/^job-sweeper's build needs Go >= 1\.26, and .*\/bin\/go is go1\.25\.4 \(GOTOOLCHAIN=local: no newer toolchain is downloaded\)/)
  expect(run('require_go', { uid: 0, goVersion: 'go1.26.0' }).code).toBe(0)
  expect(run('require_go', { uid: 0, goVersion: 'go1.27rc1' }).code).toBe(0)
})

test("the real node's host: not root is said, and the cgroup where it is v2", () => {
  const v1 = spawnSync('test', ['-f', '/sys/fs/cgroup/memory/cgroup.procs']).status === 0
  const r = run('real_node_host || echo "exit $?" >&2', { uid: 1001 })
  expect([r.code, r.calls]).toEqual([0, []])
  const out = spawnSync('bash', ['-c', `source '${TOOLS}'; id() { echo 1001; }; real_node_host; echo "exit $?"`], { encoding: 'utf8' }).stdout
  expect(out).toBe(
    v1 ? 'the real node needs root\nexit 1\n' : 'the real node needs root and a cgroup v1 host (this one has no /sys/fs/cgroup/memory: cgroup v2)\nexit 1\n'
  )
})

test('can_install: root or passwordless sudo, with apt-get', () => {
  const answers = (
    [
      [0, undefined],
      [1001, 'passwordless'],
      [1001, 'password'],
      [1001, undefined]
    ] as const
  ).map(([uid, sudo]) => [uid, sudo, run('can_install', { uid, sudo }).code])
  expect(answers).toEqual([
    [0, undefined, 0],
    [1001, 'passwordless', 0],
    [1001, 'password', 1],
    [1001, undefined, 1]
  ])
})
