// helm sweep's command line: helm upgrade's arguments go to helm as given, --sweep- flags to
// job-sweeper without the prefix, and the flags that say where the release is are read.
import { UsageError } from '../../src/cli/args.ts'
import { parseHelmSweep } from '../../src/cli/helm-sweep-args.ts'

test('helm flags pass through untouched, in order; --sweep- flags go to job-sweeper without the prefix', () => {
  const args = ['--install', 'app', './chart', '-f', 'values.yaml', '--set', 'a=b', '--sweep-wait-timeout', '5m', '--sweep-ttl=2h', '--wait']
  const command = parseHelmSweep(args)
  expect(command.helmArgs).toEqual(['--install', 'app', './chart', '-f', 'values.yaml', '--set', 'a=b', '--wait'])
  expect(command.renderArgs).toEqual(command.helmArgs)
  expect(command.preArgs).toEqual(['--wait-timeout=5m'])
  expect(command.postArgs).toEqual(['--wait-timeout=5m', '--ttl=2h'])
  expect(command.dryRun).toBe(false)
  expect(command.rollback).toBeUndefined()
})

test('a bare boolean --sweep- flag means true; a following true/false is its value', () => {
  const command = parseHelmSweep(['app', 'c', '--sweep-include-hooks', '--sweep-stream-logs', 'false', '--sweep-recreate-statefulsets'])
  expect(command.preArgs).toEqual(['--include-hooks', '--stream-logs=false', '--recreate-statefulsets'])
  expect(command.postArgs).toEqual(['--include-hooks', '--stream-logs=false'])
})

test.each([
  [['-n', 'prod'], { namespace: 'prod' }],
  [['-nprod'], { namespace: 'prod' }],
  [['--namespace=prod'], { namespace: 'prod' }],
  [['--kube-context', 'staging', '--kubeconfig', '/k/config'], { kubeContext: 'staging', kubeconfig: '/k/config' }],
  [['--kube-context=staging'], { kubeContext: 'staging' }]
])('where the release is: %j is read and stays in helm’s arguments', (flags, expected) => {
  const command = parseHelmSweep(['app', './chart', ...flags])
  expect(command).toMatchObject(expected)
  expect(command.helmArgs).toEqual(['app', './chart', ...flags])
})

test.each([
  [['--dry-run'], true],
  [['--dry-run=server'], true],
  [['--dry-run=client'], true],
  [['--dry-run=none'], false],
  [['--sweep-dry-run'], true],
  [['--sweep-dry-run', 'false'], false]
])('%j makes it a dry run: %s; the render sets its own', (flags, dryRun) => {
  const command = parseHelmSweep(['app', './chart', ...flags])
  expect(command.dryRun).toBe(dryRun)
  expect(command.renderArgs).toEqual(['app', './chart'])
  expect([...command.preArgs, ...command.postArgs]).toEqual([])
})

test.each([
  [['--atomic'], '--atomic'],
  [['--rollback-on-failure'], '--rollback-on-failure'],
  [['--atomic=true'], '--atomic'],
  [['--atomic=false'], undefined]
])('%j is warned about: %s', (flags, rollback) => {
  expect(parseHelmSweep(['app', './chart', ...flags]).rollback).toBe(rollback)
})

test.each([
  [['--sweep-release', 'x'], "Invalid --sweep-release: helm sweep sets it from helm's own flags and the rendered release; expected none"],
  [['--sweep-namespace=x'], 'Invalid --sweep-namespace'],
  [['--sweep-manifest', 'f'], 'Invalid --sweep-manifest'],
  [['--sweep-wait-timeout'], 'Invalid --sweep-wait-timeout: expected a value after it'],
  [['-n'], 'Invalid -n: expected a value after it']
])('%j is bad usage', (flags, message) => {
  expect(() => parseHelmSweep(['app', './chart', ...flags])).toThrow(UsageError)
  expect(() => parseHelmSweep(['app', './chart', ...flags])).toThrow(message)
})
