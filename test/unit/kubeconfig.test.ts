// Loading the kubeconfig input: secrets are masked, and never quoted in an error.
import { loadKubeConfig } from '../../src/kube/kubeconfig.ts'

const valid = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: tok-SECRET-1, password: pw-SECRET-2}}]
contexts: [{name: a, context: {cluster: c, user: u, namespace: team}}, {name: b, context: {cluster: c, user: u}}]
current-context: a
`

test('every token and password in the kubeconfig is handed to mask', () => {
  const masked: string[] = []
  loadKubeConfig({ content: valid }, undefined, (s) => masked.push(s))
  expect(masked.sort()).toEqual(['pw-SECRET-2', 'tok-SECRET-1'])
})

test('a YAML error names the line, not the content around it', () => {
  const broken = 'apiVersion: v1\nclusters:\n- name: x\n  token: tok-SECRET-3\n   bad: ['
  expect(() => loadKubeConfig({ content: broken }, undefined, () => undefined)).toThrow(
    'Invalid kubeconfig: not a valid kubeconfig at line 5, column 7 (its content is not shown: it holds credentials)'
  )
  try {
    loadKubeConfig({ content: broken }, undefined, () => undefined)
  } catch (e) {
    expect((e as Error).message).not.toContain('SECRET')
  }
})

test('an unknown context is named, with the ones the kubeconfig has', () => {
  expect(() => loadKubeConfig({ content: valid }, 'prod', () => undefined)).toThrow("Invalid context 'prod': expected a context of the kubeconfig (a, b)")
})
