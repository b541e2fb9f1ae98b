// Where the cluster's address and credentials come from when no kubeconfig is given: KUBECONFIG,
// then ~/.kube/config, then — in a pod — its service account (kubectl's and client-go's order).
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { KubeConfig } from '@kubernetes/client-node'
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
  // The same test as client-node's loadFromDefault (which reads HOME only), so both agree.
  if (env.KUBECONFIG || (env.HOME && existsSync(join(env.HOME, '.kube', 'config')))) {
    kc.loadFromDefault()
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
