// The shape every Kubernetes object shares, as plain JSON: what the manifest input holds (parsed with
// the settings) and what the API server answers (kube/manifest-client.ts).

/** Any Kubernetes object, as plain JSON. */
export interface KubeObject {
  apiVersion?: string
  kind?: string
  metadata?: {
    name?: string
    namespace?: string
    annotations?: Record<string, string>
    labels?: Record<string, string>
    resourceVersion?: string
    managedFields?: { manager?: string; operation?: string; subresource?: string }[]
    [key: string]: unknown
  }
  [key: string]: unknown
}
