// Kubernetes' rules for names and labels (apimachinery's validation), in one place: inputs that
// break them are refused before the cluster is read, not answered by the API server mid-run.

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/

/** Why `key` is not a label key (an optional DNS-subdomain prefix and '/', then a name), if it is not. */
export function labelKeyProblem(key: string): string | undefined {
  const parts = key.split('/')
  const name = parts[parts.length - 1]
  if (parts.length > 2) return `label key '${key}' has more than one '/'`
  if (parts.length === 2 && (parts[0] === '' || parts[0].length > 253 || !DNS_SUBDOMAIN.test(parts[0])))
    return `the prefix of label key '${key}' must be a DNS subdomain (lowercase letters, digits, '-' and '.')`
  if (name.length > 63 || !LABEL_NAME.test(name))
    return `label key '${key}' must be at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
  return undefined
}

/** Why `value` is not a label value (empty, or at most 63 letters, digits, '-', '_', '.'), if it is not. */
export function labelValueProblem(value: string): string | undefined {
  if (value === '' || (value.length <= 63 && LABEL_NAME.test(value))) return undefined
  return `label value '${value}' must be at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`
}

/** A DNS-1123 label of at most 63 characters: a namespace's name. */
export function isDnsLabel(name: string): boolean {
  return name.length <= 63 && DNS_LABEL.test(name)
}

/** A DNS-1123 subdomain of at most `max` characters: a Job's name (253), a Helm release's (53). */
export function isDnsSubdomain(name: string, max = 253): boolean {
  return name.length <= max && DNS_SUBDOMAIN.test(name)
}
