// Where the cluster's address and credentials come from when no kubeconfig is given: KUBECONFIG,
// then ~/.kube/config, then — in a pod — its service account (kubectl's and client-go's order).
import { existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import { SettingsError } from '../settings/settings.ts'

/** Where Kubernetes mounts a pod's service-account token (with ca.crt and namespace beside it). */
export const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token'

/**
 * Loads the default configuration into `kc`. In a pod (KUBERNETES_SERVICE_HOST and _PORT set, no
 * kubeconfig) that is the service account: its token file (re-read as the kubelet rotates it),
 * its CA and its namespace. `JOB_SWEEPER_IN_CLUSTER_ROOT` stands in for `/` when those files are
 * read, so that tests can emulate a pod with files and environment alone.
 */
export function loadDefaultConfig(kc: KubeConfig): void {
  // process.env, not a parameter: client-node's loaders read it too, and they must agree.
  const env = process.env
  if (env.KUBECONFIG) {
    loadKubeconfigList(kc, env.KUBECONFIG)
    return
  }
  const home = env.HOME && join(env.HOME, '.kube', 'config')
  if (home && existsSync(home)) {
    loadFile(kc, home, '~/.kube/config')
    return
  }
  if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) {
    const root = env.JOB_SWEEPER_IN_CLUSTER_ROOT ?? ''
    // client-node's own fallback would be http://localhost:8080, and a confusing refused connection.
    if (!existsSync(`${root}${SERVICE_ACCOUNT_TOKEN}`)) {
      throw new SettingsError(
        `Running in a pod, but it has no service-account token at ${SERVICE_ACCOUNT_TOKEN}: set serviceAccountName and leave automountServiceAccountToken on, or give a kubeconfig`
      )
    }
    kc.loadFromCluster(root)
    return
  }
  throw new SettingsError(
    'No cluster to talk to: give a kubeconfig (the kubeconfig input or --kubeconfig, KUBECONFIG, ~/.kube/config), or run in a pod with a service account'
  )
}

/** Where a YAML error is, without the lines around it that the parser quotes: they may hold tokens. */
function yamlErrorPlace(e: unknown): string {
  const mark = (e as { mark?: { line?: number; column?: number } }).mark
  return mark?.line === undefined ? '' : ` at line ${mark.line + 1}, column ${(mark.column ?? 0) + 1}`
}

/** One kubeconfig file, its relative paths made absolute; an error names the file (never its content). */
function loadFile(kc: KubeConfig, file: string, from: string): void {
  try {
    kc.loadFromFile(file)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    const why = code ? `cannot read it (${code})` : `not a valid kubeconfig${yamlErrorPlace(e)}`
    throw new SettingsError(`Invalid kubeconfig ${file} (from ${from}): ${why} (its content is not shown: it holds credentials)`)
  }
}

/**
 * KUBECONFIG as kubectl reads it: a list of files (':' apart, ';' on Windows), merged in order, the
 * first to set the current context winning; a file that does not exist is skipped, as kubectl does
 * (a list shared across machines names files some of them lack). When none exists, the error names them.
 */
function loadKubeconfigList(kc: KubeConfig, list: string): void {
  const files = list.split(delimiter).filter((f) => f !== '')
  const present = files.filter((f) => existsSync(f))
  if (present.length === 0) {
    const which = files.length === 1 ? `the file ${files[0]} does not exist` : `none of its files exists (${files.join(', ')})`
    throw new SettingsError(`Invalid KUBECONFIG '${list}': expected a kubeconfig file, or a list of them separated by '${delimiter}'; ${which}`)
  }
  loadFile(kc, present[0], 'KUBECONFIG')
  for (const file of present.slice(1)) {
    const next = new KubeConfig()
    loadFile(next, file, 'KUBECONFIG')
    // kubectl: the first file that sets current-context wins.
    kc.mergeConfig(next, Boolean(kc.getCurrentContext()))
  }
}
