// Without a kubeconfig, in a pod, the CLI talks to the cluster as the pod's service account.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import { loadDefaultConfig, SERVICE_ACCOUNT_TOKEN } from '../../src/kube/in-cluster.ts'
import { kubeconfigSecrets } from '../../src/kube/kubeconfig.ts'

/** A directory laid out like a pod's root: the service-account files, if `withToken`. */
function podRoot(withToken: boolean): string {
  const root = mkdtempSync(join(tmpdir(), 'pod-root-'))
  const dir = join(root, dirname(SERVICE_ACCOUNT_TOKEN))
  mkdirSync(dir, { recursive: true })
  if (withToken) writeFileSync(join(dir, 'token'), 'not-a-real-token')
  writeFileSync(join(dir, 'ca.crt'), 'not-a-real-ca')
  writeFileSync(join(dir, 'namespace'), 'sweeper-home')
  return root
}

const emptyHome = (): string => mkdtempSync(join(tmpdir(), 'home-'))

/** Loads the default configuration with exactly `env` as the process environment. */
function loadWith(env: Record<string, string>): KubeConfig {
  const saved = process.env
  process.env = { ...env }
  try {
    const kc = new KubeConfig()
    loadDefaultConfig(kc)
    return kc
  } finally {
    process.env = saved
  }
}

test('in a pod with no kubeconfig: the API server from the environment, the token file, CA and namespace of its service account', () => {
  const root = podRoot(true)
  const kc = loadWith({ HOME: emptyHome(), KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443', JOB_SWEEPER_IN_CLUSTER_ROOT: root })
  expect(kc.getCurrentCluster()).toMatchObject({ server: 'https://10.96.0.1:443', caFile: `${root}/var/run/secrets/kubernetes.io/serviceaccount/ca.crt` })
  // The token is read from its file at each request (the kubelet rotates it), never copied in.
  expect(kc.getCurrentUser()).toMatchObject({ authProvider: { name: 'tokenFile', config: { tokenFile: `${root}${SERVICE_ACCOUNT_TOKEN}` } } })
  expect(kc.getCurrentUser()?.token).toBeUndefined()
  expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('sweeper-home')
})

test('in a pod: the service-account token itself is a secret to mask, not the path of its file', () => {
  const root = podRoot(true)
  const kc = loadWith({ HOME: emptyHome(), KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443', JOB_SWEEPER_IN_CLUSTER_ROOT: root })
  expect(kubeconfigSecrets(kc)).toEqual(['not-a-real-token'])
})

test('a kubeconfig wins over the pod’s service account, as with kubectl', () => {
  const kubeconfig = join(mkdtempSync(join(tmpdir(), 'kubeconfig-')), 'config')
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'local', cluster: { server: 'https://127.0.0.1:6443' } }],
      users: [{ name: 'me', user: { token: 'not-a-real-token' } }],
      contexts: [{ name: 'local', context: { cluster: 'local', user: 'me' } }],
      'current-context': 'local'
    })
  )
  const kc = loadWith({
    HOME: emptyHome(),
    KUBECONFIG: kubeconfig,
    KUBERNETES_SERVICE_HOST: '10.96.0.1',
    KUBERNETES_SERVICE_PORT: '443',
    JOB_SWEEPER_IN_CLUSTER_ROOT: podRoot(true)
  })
  expect(kc.getCurrentCluster()?.server).not.toBe('https://10.96.0.1:443')
  expect(kc.getCurrentCluster()?.server).toMatch(/^https:\/\/127\.0\.0\.1:/)
})

test('in a pod without a mounted token: an error that says what to change, not a refused connection to localhost', () => {
  const env = { HOME: emptyHome(), KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443', JOB_SWEEPER_IN_CLUSTER_ROOT: podRoot(false) }
  expect(() => loadWith(env)).toThrow(
    `Running in a pod, but it has no service-account token at ${SERVICE_ACCOUNT_TOKEN}: set serviceAccountName and leave automountServiceAccountToken on, or give a kubeconfig`
  )
})

test('no kubeconfig and not in a pod: says where a kubeconfig can come from', () => {
  expect(() => loadWith({ HOME: emptyHome() })).toThrow(
    'No cluster to talk to: give a kubeconfig (the kubeconfig input or --kubeconfig, KUBECONFIG, ~/.kube/config), or run in a pod with a service account'
  )
})

/** A kubeconfig file in a folder of its own whose one context is `name`, at server `server`. */
function kubeconfigFile(name: string, server: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'kubeconfig-')), 'config')
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name, cluster: { server } }],
      users: [{ name, user: { token: 'not-a-real-token' } }],
      contexts: [{ name, context: { cluster: name, user: name } }],
      'current-context': name
    })
  )
  return file
}

test('a KUBECONFIG list with a missing file: the file is skipped as kubectl skips it, the others merged, the first current-context wins', () => {
  const a = kubeconfigFile('a', 'https://127.0.0.1:6443')
  const b = kubeconfigFile('b', 'https://127.0.0.1:7443')
  const missing = join(emptyHome(), 'gone', 'config')
  const kc = loadWith({ HOME: emptyHome(), KUBECONFIG: [missing, a, b].join(':') })
  expect(kc.getContexts().map((c) => c.name)).toEqual(['a', 'b'])
  expect(kc.getCurrentContext()).toBe('a')
  expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443')
})

test('a KUBECONFIG whose file does not exist: the error names its path', () => {
  const missing = join(emptyHome(), 'nowhere', 'config')
  expect(() => loadWith({ HOME: emptyHome(), KUBECONFIG: missing })).toThrow(
    `Invalid KUBECONFIG '${missing}': expected a kubeconfig file, or a list of them separated by ':'; the file ${missing} does not exist`
  )
})

test('a KUBECONFIG file that is not a kubeconfig: the error names its path, not its content', () => {
  const file = join(emptyHome(), 'config')
  writeFileSync(file, 'clusters: [not: valid: yaml\ntoken: not-a-real-token\n')
  let message = ''
  try {
    loadWith({ HOME: emptyHome(), KUBECONFIG: file })
  } catch (e) {
    message = (e as Error).message
  }
  expect(message).toMatch(new RegExp(`^Invalid kubeconfig ${file} \\(from KUBECONFIG\\): not a valid kubeconfig`))
  expect(message).not.toContain('not-a-real-token')
})
