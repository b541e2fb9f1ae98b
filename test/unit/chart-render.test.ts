// The chart input: helm-args split as a shell would (without expanding anything), the render's
// arguments, and the errors that name the input before anything runs.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { helmWords, parseWithChart, renderArgs } from '../../src/settings/chart-render.ts'
import { SettingsError } from '../../src/settings/inputs.ts'

test.each([
  ['-f values.yaml --set a=b', ['-f', 'values.yaml', '--set', 'a=b']],
  ["--set 'msg=hello world'\n  --version 1.2.3", ['--set', 'msg=hello world', '--version', '1.2.3']],
  ['--set-string "a=$HOME" --description=\'\'', ['--set-string', 'a=$HOME', '--description=']],
  ['', []]
])('helm-args %j are the words %j', (text, words) => {
  expect(helmWords(text)).toEqual(words)
})

test('an unclosed quote is refused naming helm-args', () => {
  expect(() => helmWords("--set 'a=b")).toThrow("Invalid helm-args '--set 'a=b': expected each ' closed")
})

test('the render: the user’s arguments, where the release is, then the dry run last (it wins over any of the user’s)', () => {
  expect(renderArgs('app', './chart', ['-f', 'v.yaml', '--dry-run=client'], { namespace: 'prod', context: 'ctx', kubeconfig: '/k' })).toEqual([
    'upgrade',
    'app',
    './chart',
    '-f',
    'v.yaml',
    '--dry-run=client',
    '--namespace',
    'prod',
    '--kube-context',
    'ctx',
    '--kubeconfig',
    '/k',
    '--dry-run=server',
    '--output',
    'table'
  ])
})

const inputs =
  (values: Record<string, string>) =>
  (name: string): string =>
    values[name] ?? ''

test.each([
  [{ 'helm-args': '--set a=b' }, "Invalid helm-args '--set a=b' without chart: expected chart"],
  [{ chart: './c', manifest: 'r.yaml', release: 'app' }, "Invalid chart './c' with manifest: expected one of them"],
  [{ chart: './c' }, "Invalid chart './c' without release: expected release"]
])('%j is refused before helm runs', async (values, message) => {
  const rendered = parseWithChart(
    inputs(values),
    (read) => read,
    () => {}
  )
  await expect(rendered).rejects.toThrow(SettingsError)
  await expect(
    parseWithChart(
      inputs(values),
      (read) => read,
      () => {}
    )
  ).rejects.toThrow(message)
})

test('without chart the inputs are as given', async () => {
  const read = inputs({ manifest: 'r.yaml' })
  expect(
    await parseWithChart(
      read,
      (r) => r,
      () => {}
    )
  ).toBe(read)
})

test('no helm on PATH: the error says so, and what to do instead', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'no-helm-'))
  await expect(
    parseWithChart(
      inputs({ chart: './c', release: 'app' }),
      (r) => r,
      () => {},
      { PATH: empty }
    )
  ).rejects.toThrow("Invalid chart './c': rendering it needs helm on PATH (helm upgrade --dry-run=server), and there is none")
})
