// A Secret's values never leave job-sweeper, in any encoding: a release whose next rendering
// changes a password (data, base64) and a token (stringData) is checked by the CLI (text and
// --json), the action's preflight phase and pre's gate; every output each writes (standard output
// and error, the job summary, the step's outputs, the report file) is scanned for the old and new
// values, plain, base64 and base64 of base64. The keys are named, and a ConfigMap's change beside
// them is shown with its values (the control: the scan would see a value that got out).
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runAction } from './action.ts'
import { runCli } from './bin.ts'
import { helm } from './cluster/testenv.ts'
import { release, useScenario } from './scenario.ts'

const scenario = useScenario('preflight-secrets')

/** A chart of one Secret (a password in data, a token in stringData) and one ConfigMap. */
function chart(): string {
  const dir = mkdtempSync(join(tmpdir(), 'secret-chart-'))
  mkdirSync(join(dir, 'templates'))
  writeFileSync(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: secret-demo\nversion: 0.1.0\n')
  writeFileSync(
    join(dir, 'templates', 'secret.yaml'),
    'apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-db\ndata:\n  password: {{ .Values.password | b64enc }}\nstringData:\n  token: {{ .Values.token | quote }}\n'
  )
  writeFileSync(
    join(dir, 'templates', 'config.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  level: {{ .Values.level | quote }}\n'
  )
  return dir
}

const secret = (): string => randomBytes(18).toString('base64url')
const encodings = (value: string): string[] => {
  const once = Buffer.from(value).toString('base64')
  return [value, once, Buffer.from(once).toString('base64'), JSON.stringify(value).slice(1, -1)]
}

/** Every file under `dir`, as text. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))
}

test('a changed password and token: named by key in every output, and neither value in any encoding anywhere', async () => {
  const dir = chart()
  const old = { password: secret(), token: secret() }
  const next = { password: secret(), token: secret() }
  const set = (v: { password: string; token: string }, level: string) => [
    '--set',
    `password=${v.password}`,
    '--set',
    `token=${v.token}`,
    '--set',
    `level=${level}`
  ]
  const installed = helm('install', release, dir, '-n', scenario.ns, ...set(old, '1'))
  expect(installed.stderr).toBe('')
  const rendered = helm('template', release, dir, '-n', scenario.ns, ...set(next, '2'))
  const manifest = join(mkdtempSync(join(tmpdir(), 'rendered-')), 'rendered.yaml')
  writeFileSync(manifest, rendered.stdout)

  const logsDir = mkdtempSync(join(tmpdir(), 'secret-logs-'))
  const args = ['--manifest', manifest, '--namespace', scenario.ns, '--release', release, '--logs-dir', logsDir]
  const text = await runCli(['preflight', ...args])
  const json = await runCli(['preflight', ...args, '--json'])
  const inputs = { manifest, namespace: scenario.ns, release, 'logs-dir': logsDir }
  const phase = await runAction({ ...inputs, phase: 'preflight' })
  // Pre's gate reads the same rendering; the release's Jobs (none) are all it could delete.
  const pre = await runAction({ ...inputs, phase: 'pre' })

  const outputs = [
    text.stdout,
    text.stderr,
    json.stdout,
    json.stderr,
    ...[phase, pre].flatMap((r) => [r.stdout, r.stderr, r.summary, JSON.stringify(r.outputs)]),
    ...filesUnder(logsDir)
  ].join('\n')
  // The control: what the scan reads holds the keys and the ConfigMap's values.
  expect(text.stdout).toMatch(/Secret \S+-db\s+changes: .*data\.password: changed/)
  expect(text.stdout).toContain('data.level: 1 → 2')
  expect(outputs).toContain('data.password: changed')
  expect(filesUnder(logsDir).join('\n')).toContain('data.password: changed')
  for (const value of [...Object.values(old), ...Object.values(next)])
    for (const encoded of encodings(value)) expect({ value: encoded, found: outputs.includes(encoded) }).toEqual({ value: encoded, found: false })
})
