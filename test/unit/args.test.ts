// The CLI's command line: the same inputs as the action, keywords that ignore case the same way,
// and a kubeconfig that is never on the command line.
import { parseCommandLine } from '../../src/cli/args.ts'

const run = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const command = parseCommandLine(argv, env)
  if (command.kind !== 'run') throw new Error('expected a run')
  return command
}

test('a bare boolean flag means true; a following true/false in any case is its value', () => {
  expect(run(['sweep', '--dry-run', '--selector', 'a=b']).inputs['dry-run']).toBe('true')
  expect(run(['sweep', '--dry-run', 'TRUE', '--selector', 'a=b']).inputs['dry-run']).toBe('TRUE')
  expect(run(['sweep', '--mask-log-tails', 'False', '--selector', 'a=b']).inputs['mask-log-tails']).toBe('False')
})

test('commands ignore case, as phase: Pre does in the action', () => {
  expect(run(['PRE', '--release', 'x']).phase).toBe('pre')
})

test('--kubeconfig-env reads the content from the variable it names', () => {
  const content = 'apiVersion: v1\nclusters: []\n'
  expect(run(['pre', '--release', 'x', '--kubeconfig-env', 'KC'], { KC: content }).inputs).toEqual({ release: 'x', kubeconfig: content })
})

test('--kubeconfig keeps a path as given, ~ included (the settings expand it)', () => {
  expect(run(['pre', '--release', 'x', '--kubeconfig', '~/.kube/config']).inputs.kubeconfig).toBe('~/.kube/config')
})

test.each([
  [['pre', '--release', 'x', '--kubeconfig', 'apiVersion: v1\nclusters: []'], 'Invalid --kubeconfig: expected a file path (its content is not shown)'],
  [['pre', '--release', 'x', '--kubeconfig', Buffer.from('apiVersion: v1\nclusters: []').toString('base64')], 'Invalid --kubeconfig: expected a file path'],
  [
    ['pre', '--release', 'x', '--kubeconfig-env', 'NOPE'],
    "Invalid --kubeconfig-env 'NOPE': expected the name of an environment variable that holds a kubeconfig"
  ],
  [
    ['pre', '--release', 'x', '--kubeconfig-env', 'KC', '--kubeconfig', '/k'],
    "Invalid --kubeconfig-env 'KC' with --kubeconfig: expected one of them, not both"
  ],
  [['sweep', '--selector', 'a=b', '--namespace', 'one', '--namespace', 'two'], 'Invalid --namespace: expected it once; it was given 2 times'],
  [['pre', '--release', 'x', '--dry-run', 'yes'], "Unexpected argument 'yes'"]
])('%j is bad usage', (argv, message) => {
  expect(() => parseCommandLine(argv, { KC: 'apiVersion: v1\nclusters: []' })).toThrow(message)
})

test('a refused kubeconfig is never quoted', () => {
  expect(() => parseCommandLine(['pre', '--release', 'x', '--kubeconfig', 'clusters: []\ntoken: tok-SECRET'], {})).toThrow(
    expect.objectContaining({ message: expect.not.stringContaining('SECRET') })
  )
})
