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

test('phase preflight reads every object of the manifest, hooks apart; pre does not', () => {
  const s = parse({ phase: 'preflight', manifest: 'rendered.yaml' })
  expect(s.manifestObjects?.objects.map((o) => `${o.kind}/${o.metadata?.name}`)).toEqual(['StatefulSet/db', 'Service/db'])
  expect(s.manifestObjects?.hooks).toEqual(['Job/hook'])
  expect(parse({ phase: 'pre', manifest: 'rendered.yaml' }).manifestObjects).toBeUndefined()
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
