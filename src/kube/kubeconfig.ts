// Loading the kubeconfig: from the input, else KUBECONFIG / ~/.kube/config / in-cluster.
// Every secret in it is masked before anything could print it.
import { KubeConfig } from '@kubernetes/client-node'

/** Loads the kubeconfig and selects `context`; `mask` is called with every secret value. */
export function loadKubeConfig(content: string | undefined, context: string | undefined, mask: (secret: string) => void): KubeConfig {
  const kc = new KubeConfig()
  if (content !== undefined) kc.loadFromString(content)
  else kc.loadFromDefault()
  for (const user of kc.getUsers()) {
    for (const secret of [user.token, user.password, user.keyData, user.certData]) {
      if (secret) mask(secret)
    }
  }
  if (context !== undefined) {
    if (!kc.getContextObject(context)) {
      const known = kc.getContexts().map((c) => c.name)
      throw new Error(`Invalid context '${context}': the kubeconfig has ${known.length ? known.join(', ') : 'no contexts'}`)
    }
    kc.setCurrentContext(context)
  }
  if (!kc.getCurrentCluster()) throw new Error('No cluster to talk to: set the kubeconfig input, KUBECONFIG, or run in a cluster')
  return kc
}
