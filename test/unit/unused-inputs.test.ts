// Inputs that do nothing in the phase are said, by name and why; defaults say nothing.
import { parseSettings, type Phase } from '../../src/settings/settings.ts'
import { unusedInputs } from '../../src/settings/unused-inputs.ts'
import { readAction } from '../../scripts/docs.ts'

const parse = (inputs: Record<string, string>) => parseSettings((name) => inputs[name] ?? '', {}, { exists: () => true, readText: () => '' })

test.each<[string, Record<string, string>, Phase[], string[]]>([
  [
    'the CLI’s pre with wait-for-jobs',
    { phase: 'pre', release: 'app', 'wait-for-jobs': '5m' },
    ['pre'],
    [
      "wait-for-jobs '5m' does nothing in phase: pre: only post waits for the Jobs it gives TTLs (pre waits for the running Jobs it would delete, as on-running and wait-timeout say)"
    ]
  ],
  ['the action’s pre: its post step waits, so nothing', { phase: 'pre', release: 'app', 'wait-for-jobs': '5m' }, ['pre', 'post'], []],
  [
    'fail-on-job-failure false without a wait',
    { phase: 'post', release: 'app', 'fail-on-job-failure': 'false' },
    ['post'],
    ["fail-on-job-failure 'false' does nothing without wait-for-jobs: only post with wait-for-jobs fails the step on a failed Job"]
  ],
  ['fail-on-job-failure false with a wait: it works', { phase: 'post', release: 'app', 'fail-on-job-failure': 'false', 'wait-for-jobs': '5m' }, ['post'], []],
  [
    'preflight warn without a manifest',
    { phase: 'pre', release: 'app', preflight: 'warn' },
    ['pre'],
    ["preflight 'warn' does nothing without manifest: pre checks the rendered release only when manifest gives it"]
  ],
  [
    'post with on-running, ttl in pre, stuck-after in a sweep',
    { phase: 'sweep', release: 'app', 'on-running': 'delete', 'stuck-after': '5m' },
    ['sweep'],
    [
      "on-running 'delete' does nothing in phase: sweep: only pre deletes Jobs that may still run; post and sweep never delete a running Job",
      "stuck-after '5m' does nothing in phase: sweep: only pre and post read the pods of running Jobs; a sweep never deletes one"
    ]
  ],
  [
    'lease-name in preflight',
    { phase: 'preflight', manifest: '/m.yaml', 'lease-name': 'app-job-sweeper' },
    ['preflight'],
    ["lease-name 'app-job-sweeper' does nothing in phase: preflight: preflight changes nothing, so it takes no Lease"]
  ],
  [
    'lease-name in a sweep of every namespace',
    { phase: 'sweep', selector: 'a=b', 'all-namespaces': 'true', 'lease-name': 'app-job-sweeper' },
    ['sweep'],
    ["lease-name 'app-job-sweeper' does nothing with all-namespaces: a sweep of every namespace takes no Lease (docs/concurrency.md)"]
  ],
  [
    'lease-name in pre, post and a sweep of listed namespaces: it works',
    { phase: 'sweep', selector: 'a=b', 'lease-name': 'app-job-sweeper' },
    ['pre', 'post', 'sweep'],
    []
  ],
  [
    'ttl, failure-grace and keep-last in the CLI’s pre',
    { phase: 'pre', release: 'app', ttl: '2h', 'failure-grace': 'never', 'keep-last': '3' },
    ['pre'],
    [
      "ttl '2h' does nothing in phase: pre: only post sets TTLs, and sweep enforces them",
      "failure-grace 'never' does nothing in phase: pre: only post sets TTLs, and sweep enforces them",
      "keep-last '3' does nothing in phase: pre: only post and sweep keep the newest Jobs of a group"
    ]
  ]
])('%s', (_, inputs, phases, warnings) => {
  expect(unusedInputs(parse(inputs), phases)).toEqual(warnings)
})

test('the CLI names its flags', () => {
  expect(unusedInputs(parse({ phase: 'pre', release: 'app', 'wait-for-jobs': '5m' }), ['pre'], (n) => `--${n}`)[0]).toMatch(
    /^--wait-for-jobs '5m' does nothing in phase: pre: .* as --on-running and --wait-timeout say\)$/
  )
})

test.each(['pre', 'post', 'sweep', 'preflight'] as const)("phase %s: every input at action.yml's default says nothing (a runner passes them all)", (phase) => {
  const action = readAction()
  const given: Record<string, string> = { phase, release: 'app', manifest: phase === 'preflight' ? 'rendered.yaml' : '' }
  const settings = parseSettings(
    (name) => given[name] || String(action.inputs[name]?.default ?? ''),
    {},
    { exists: () => true, readText: () => 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' }
  )
  expect(unusedInputs(settings, [phase])).toEqual([])
})
