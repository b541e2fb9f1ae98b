// phase: preflight (CLI: `job-sweeper preflight`) needs the rendered release, and reads every
// object of it but Helm's hooks.
import { parseCommandLine, usage } from '../../src/cli/args.ts'
import { parseSettings, type SettingsFiles } from '../../src/settings/settings.ts'

const rendered = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
---
apiVersion: v1
kind: Service
metadata: {name: db}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: hook
  annotations: {helm.sh/hook: pre-upgrade}
---
# an empty document, as helm template leaves for a disabled template
`
const disk: SettingsFiles = { readText: () => rendered, exists: () => true }
const parse = (inputs: Record<string, string>) => parseSettings((name) => inputs[name] ?? '', {}, disk)

test('phase preflight without manifest is bad usage, naming both', () => {
  expect(() => parse({ phase: 'preflight', release: 'app' })).toThrow(
    "Invalid phase 'preflight' without manifest: expected manifest, the rendered release to check"
  )
})

test('phase preflight reads every object of the manifest, hooks apart; so does pre, unless its preflight is off', () => {
  const s = parse({ phase: 'preflight', manifest: 'rendered.yaml' })
  expect(s.manifestObjects?.objects.map((o) => `${o.kind}/${o.metadata?.name}`)).toEqual(['StatefulSet/db', 'Service/db'])
  expect(s.manifestObjects?.hooks.map((o) => `${o.kind}/${o.metadata?.name}`)).toEqual(['Job/hook'])
  const pre = parse({ phase: 'pre', manifest: 'rendered.yaml' })
  expect([pre.preflightGate, pre.manifestObjects?.objects.length]).toEqual(['fail', 2])
  expect(parse({ phase: 'pre', manifest: 'rendered.yaml', preflight: 'WARN' }).preflightGate).toBe('warn')
  expect(parse({ phase: 'pre', manifest: 'rendered.yaml', preflight: 'off' }).manifestObjects).toBeUndefined()
  expect(parse({ phase: 'post', manifest: 'rendered.yaml' }).manifestObjects).toBeUndefined()
})

test('a bad preflight value is refused, naming the input and the choices', () => {
  expect(() => parse({ phase: 'pre', manifest: 'rendered.yaml', preflight: 'strict' })).toThrow("Invalid preflight 'strict': expected one of fail, warn, off")
})

test('recreate-statefulsets: off by default; it needs pre (or preflight), a manifest and a preflight that is not off', () => {
  expect(parse({ phase: 'pre', manifest: 'rendered.yaml' }).recreateStatefulSets).toBe(false)
  expect(parse({ phase: 'pre', manifest: 'rendered.yaml', 'recreate-statefulsets': 'true' }).recreateStatefulSets).toBe(true)
  expect(parse({ phase: 'preflight', manifest: 'rendered.yaml', 'recreate-statefulsets': 'true' }).recreateStatefulSets).toBe(true)
  expect(() => parse({ phase: 'pre', release: 'app', 'recreate-statefulsets': 'true' })).toThrow(
    "Invalid recreate-statefulsets 'true' without manifest: expected manifest, since the preflight verdicts choose which StatefulSets to recreate"
  )
  expect(() => parse({ phase: 'pre', manifest: 'rendered.yaml', preflight: 'off', 'recreate-statefulsets': 'true' })).toThrow(
    "Invalid recreate-statefulsets 'true' with preflight 'off': expected preflight fail or warn"
  )
  expect(() => parse({ phase: 'post', manifest: 'rendered.yaml', 'recreate-statefulsets': 'true' })).toThrow(
    "Invalid recreate-statefulsets 'true' with phase 'post': expected phase pre"
  )
  expect(() => parse({ phase: 'pre', manifest: 'rendered.yaml', 'recreate-statefulsets': 'yes' })).toThrow(
    "Invalid recreate-statefulsets 'yes': expected true or false"
  )
})

test('the CLI has a preflight command, with its own usage', () => {
  expect(parseCommandLine(['preflight', '--manifest', 'rendered.yaml'], {})).toMatchObject({
    kind: 'run',
    phase: 'preflight',
    inputs: { manifest: 'rendered.yaml' }
  })
  expect(usage('preflight')).toContain('Usage: job-sweeper preflight --manifest FILE')
  expect(usage()).toContain('preflight  will helm upgrade apply?')
})
