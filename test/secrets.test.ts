// Secrets stay secret: a kubeconfig with a token, a client key and certificate, an exec plugin's
// env and args, auth-provider secrets and a password, used through the action and the CLI. No
// secret appears in standard output or error, the summary, the outputs or logs-dir, except inside
// `::add-mask::` (which tells the runner to hide it). The exec plugin is a script that reads the
// cluster's real token from a file; a failing one quotes its env secret on standard error, which
// job-sweeper repeats, redacted. No secret is ever on a command line, in the tests either.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { outputNames, runAction, WORKFLOW_RUN_ENV, type ActionRun } from './action.ts'
import { runCli, type CliRun } from './bin.ts'
import { kubeConfig } from './cluster/testenv.ts'
import { finishedReleaseJob, release, useScenario } from './scenario.ts'

const scenario = useScenario('secrets')
let ns: string
let dir: string
let kubeconfigPath: string
let kubeconfigYaml: string
/** Every secret the kubeconfig holds, by what it is (the names, never the values, are printed). */
let secrets: Record<string, string>

const secret = (what: string): string => `${what}-${randomBytes(12).toString('hex')}`

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'secrets-'))
  const admin = kubeConfig()
  const cluster = admin.getCurrentCluster()
  const realToken = admin.getCurrentUser()?.token ?? ''
  const tokenFile = join(dir, 'token')
  writeFileSync(tokenFile, realToken, { mode: 0o600 })
  // An exec credential plugin: the token comes from a file, and printf is the shell's own, so the
  // token is on no command line. Told to fail, it quotes its API key, as real plugins may.
  const plugin = join(dir, 'credential-plugin.sh')
  writeFileSync(
    plugin,
    [
      '#!/bin/sh',
      'if [ -n "$FAIL_WITH_KEY" ]; then echo "login refused for API key $PLUGIN_API_KEY" >&2; exit 1; fi',
      `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$(cat "$TOKEN_FILE")"`,
      ''
    ].join('\n')
  )
  chmodSync(plugin, 0o755)
  const keyLines = [randomBytes(48).toString('base64'), randomBytes(48).toString('base64')]
  const clientKey = `-----BEGIN PRIVATE KEY-----\n${keyLines.join('\n')}\n-----END PRIVATE KEY-----\n`
  secrets = {
    'the real token': realToken,
    'the exec env secret': secret('env'),
    'an exec arg secret': secret('arg'),
    'a password': secret('password'),
    'client-key-data': Buffer.from(clientKey).toString('base64'),
    'client key line 1': keyLines[0],
    'client key line 2': keyLines[1],
    'client-certificate-data': Buffer.from(secret('cert')).toString('base64'),
    'an auth-provider client-secret': secret('client-secret'),
    'an auth-provider refresh-token': secret('refresh-token'),
    'an auth-provider id-token': secret('id-token'),
    'an auth-provider access-token': secret('access-token')
  }
  const execUser = (name: string, env: Record<string, string>) => ({
    name,
    user: {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: plugin,
        interactiveMode: 'Never',
        env: Object.entries({ TOKEN_FILE: tokenFile, PLUGIN_API_KEY: secrets['the exec env secret'], ...env }).map(([n, value]) => ({ name: n, value }))
      }
    }
  })
  const context = (name: string, user: string) => ({ name, context: { cluster: 'test', user } })
  kubeconfigYaml = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server: cluster?.server, 'certificate-authority-data': cluster?.caData } }],
    contexts: [context('exec', 'exec-plugin'), context('exec-failing', 'exec-failing'), context('token', 'admin'), context('cert', 'decoy-cert')],
    'current-context': 'exec',
    users: [
      { name: 'admin', user: { token: secrets['the real token'] } },
      execUser('exec-plugin', {}),
      execUser('exec-failing', { FAIL_WITH_KEY: '1' }),
      { name: 'decoy-cert', user: { 'client-certificate-data': secrets['client-certificate-data'], 'client-key-data': secrets['client-key-data'] } },
      {
        name: 'decoy-exec-args',
        user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: '/bin/false', args: [`--api-key=${secrets['an exec arg secret']}`] } }
      },
      {
        name: 'decoy-oidc',
        user: {
          'auth-provider': {
            name: 'oidc',
            config: {
              'client-id': 'job-sweeper',
              'client-secret': secrets['an auth-provider client-secret'],
              'refresh-token': secrets['an auth-provider refresh-token'],
              'id-token': secrets['an auth-provider id-token'],
              'access-token': secrets['an auth-provider access-token']
            }
          }
        }
      },
      { name: 'decoy-basic', user: { username: 'admin', password: secrets['a password'] } }
    ]
  })
  kubeconfigPath = join(dir, 'kubeconfig')
  writeFileSync(kubeconfigPath, kubeconfigYaml, { mode: 0o600 })
})

afterAll(() => rmSync(dir, { recursive: true, force: true }))

beforeEach(async () => {
  ns = scenario.ns
  await finishedReleaseJob(ns, `${release}-migrate`)
})

function filesUnder(root: string): string[] {
  if (!existsSync(root)) return []
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
}

/** Where a secret shows, as "<place> holds <which secret>": never the secret itself. */
function leaks(places: Record<string, string>): string[] {
  return Object.entries(places).flatMap(([place, text]) =>
    Object.entries(secrets)
      .filter(([, value]) => text.includes(value))
      .map(([what]) => `${place} holds ${what}`)
  )
}

/** Everything a step leaves, but its `::add-mask::` lines. */
function actionPlaces(run: ActionRun): Record<string, string> {
  const stdout = run.stdout
    .split('\n')
    .filter((l) => !l.startsWith('::add-mask::'))
    .join('\n')
  const logsDir = run.outputs['logs-dir']
  const logs = logsDir ? Object.fromEntries(filesUnder(logsDir).map((f) => [f, readFileSync(f, 'utf8')])) : {}
  return { stdout, stderr: run.stderr, summary: run.summary, outputs: JSON.stringify(run.outputs), ...logs }
}

function cliPlaces(run: CliRun, logsDir: string): Record<string, string> {
  return { stdout: run.stdout, stderr: run.stderr, ...Object.fromEntries(filesUnder(logsDir).map((f) => [f, readFileSync(f, 'utf8')])) }
}

/** The secrets the step registered with the runner (`::add-mask::`), by what they are. */
function maskedByRunner(run: ActionRun): string[] {
  const lines = run.stdout.split('\n').filter((l) => l.startsWith('::add-mask::'))
  const registered = new Set(lines.map((l) => l.slice('::add-mask::'.length)))
  return Object.entries(secrets)
    .filter(([, value]) => registered.has(value))
    .map(([what]) => what)
    .sort()
}

describe('the action', () => {
  test('pruning with an exec plugin and saved logs: every secret is registered with the runner, and none shows elsewhere', async () => {
    const run = await runAction(
      { kubeconfig: kubeconfigYaml, context: 'exec', namespace: ns, release, 'harvest-logs': 'all' },
      { env: { ...WORKFLOW_RUN_ENV, KUBECONFIG: '/nonexistent' } }
    )
    expect(run.code).toBe(0)
    expect(outputNames(run, 'pruned')).toEqual([`${release}-migrate`]) // the plugin's token worked
    expect(filesUnder(run.outputs['logs-dir']).length).toBeGreaterThan(0)
    expect(maskedByRunner(run)).toEqual(Object.keys(secrets).sort())
    expect(leaks(actionPlaces(run))).toEqual([])
  })

  test("a failing exec plugin's error quotes its env secret: the step fails with it redacted", async () => {
    const run = await runAction(
      { kubeconfig: kubeconfigYaml, context: 'exec-failing', namespace: ns, release },
      { env: { ...WORKFLOW_RUN_ENV, KUBECONFIG: '/nonexistent' } }
    )
    expect(run.code).toBe(1)
    // First where a secret shows (by name), so that a failure never prints one.
    expect(leaks(actionPlaces(run))).toEqual([])
    expect(run.stdout).toContain('::error::login refused for API key ***')
    expect(run.summary).toContain('login refused for API key &#42;&#42;&#42;') // *** escaped for markdown
  })

  test('a kubeconfig path (~ expanded) is read as a file, and masked only for what it holds', async () => {
    const home = join(dir, 'home-action')
    mkdirSync(join(home, '.kube'), { recursive: true })
    writeFileSync(join(home, '.kube', 'config'), kubeconfigYaml, { mode: 0o600 })
    const run = await runAction(
      { kubeconfig: '~/.kube/config', context: 'token', namespace: ns, release, 'dry-run': 'true' },
      { env: { ...WORKFLOW_RUN_ENV, HOME: home, KUBECONFIG: '/nonexistent' } }
    )
    expect(run.code).toBe(0)
    expect(outputNames(run, 'pruned')).toEqual([`${release}-migrate`])
    expect(run.stdout).not.toContain('::add-mask::~/.kube/config')
    expect(leaks(actionPlaces(run))).toEqual([])
  })
})

describe('the CLI', () => {
  test('--kubeconfig PATH with an exec plugin, logs saved: no secret in its output or logs', async () => {
    const logsDir = join(dir, `logs-${ns}`)
    const run = await runCli(
      [
        'pre',
        '--kubeconfig',
        kubeconfigPath,
        '--context',
        'exec',
        '--namespace',
        ns,
        '--release',
        release,
        '--harvest-logs',
        'all',
        '--logs-dir',
        logsDir,
        '--json'
      ],
      {
        KUBECONFIG: '/nonexistent'
      }
    )
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout).pruned.map((j: { name: string }) => j.name)).toEqual([`${release}-migrate`])
    expect(filesUnder(logsDir).length).toBeGreaterThan(0)
    expect(leaks(cliPlaces(run, logsDir))).toEqual([])
  })

  test("--kubeconfig-env NAME, and a failing exec plugin's secret redacted in the error", async () => {
    const logsDir = join(dir, `logs-failing-${ns}`)
    mkdirSync(logsDir)
    const run = await runCli(
      ['pre', '--kubeconfig-env', 'DEPLOY_KUBECONFIG', '--context', 'exec-failing', '--namespace', ns, '--release', release, '--logs-dir', logsDir],
      {
        DEPLOY_KUBECONFIG: Buffer.from(kubeconfigYaml).toString('base64'),
        KUBECONFIG: '/nonexistent'
      }
    )
    expect(run.code).toBe(3)
    expect(leaks(cliPlaces(run, logsDir))).toEqual([])
    expect(run.stderr).toContain('job-sweeper: login refused for API key ***')
  })

  test('--kubeconfig ~/.kube/config is a path, as kubectl and helm take it', async () => {
    const home = join(dir, 'home-cli')
    mkdirSync(join(home, '.kube'), { recursive: true })
    writeFileSync(join(home, '.kube', 'config'), kubeconfigYaml, { mode: 0o600 })
    const run = await runCli(
      ['sweep', '--kubeconfig', '~/.kube/config', '--context', 'token', '--namespace', ns, '--release', release, '--ttl', '0', '--dry-run'],
      {
        HOME: home,
        KUBECONFIG: '/nonexistent'
      }
    )
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(`${release}-migrate`)
  })
})
