// The API server's answer to a dry-run write, classified into a verdict. Pure: it reads the
// Status (its code, reason, message and causes) the way a person reads `helm upgrade`'s error, and
// the live and rendered objects only to say what changed (before → after). A Secret's verdict
// names the keys that change and never a value (secret-values.ts).
import type { KubeObject, Refusal } from '../kube/manifest-client.ts'
import { differences, show, valueAt } from './diff.ts'
import { isSecret, redactSecretValues, secretChanges, secretPaths, secretValues } from './secret-values.ts'
import type { RemovedField } from './three-way.ts'
import type { Verdict } from './verdict.ts'

/** A Kubernetes Status, as far as the verdicts read it. */
interface Status {
  message?: string
  reason?: string
  details?: { causes?: { reason?: string; message?: string; field?: string }[] }
}

function statusOf(body: string): Status {
  try {
    const parsed = JSON.parse(body) as unknown
    if (typeof parsed === 'object' && parsed !== null) return parsed as Status
  } catch {
    // plain text: `404 page not found`
  }
  return { message: body.trim() }
}

/** Messages of the checks that forbid changing a field once set (Kubernetes' and CEL's `self == oldSelf` rules). */
const IMMUTABLE = /field is immutable|may not change once set|is immutable|updates to \S+ spec for fields other than .* are forbidden|cannot be changed/i

/** Metadata the API server keeps up to date itself: no change of the object's. */
const BOOKKEEPING = ['managedFields', 'resourceVersion', 'generation']

function withoutBookkeeping(o: KubeObject): KubeObject {
  const metadata = { ...o.metadata }
  for (const key of BOOKKEEPING) delete metadata[key]
  return { ...o, metadata }
}

/** An accepted dry run: unchanged when the answer is the live object (but for bookkeeping), else its changes. */
export function classifyAccepted(live: KubeObject | undefined, answer: KubeObject): Verdict {
  if (live === undefined) return { kind: 'new' }
  const secret = isSecret(answer)
  const paths = differences(withoutBookkeeping(live), withoutBookkeeping(answer), '', false, secret ? secretPaths : undefined)
  const verdict: Verdict = paths.length === 0 ? { kind: 'unchanged' } : { kind: 'changes', paths }
  return secret ? redactSecretValues(verdict, secretValues([live, answer])) : verdict
}

/** A field a three-way patch removes: `path: before → removed`, a Secret's without the value. */
const removedLine = (r: RemovedField, secret: boolean): string => (secret ? `${r.path}: removed` : `${r.path}: ${show(r.before)} → removed`)

/**
 * Each immutable field's change: the rendered value's differences from the live one under the
 * field's path (what the chart sets) and the fields under it that the patch removes (what the
 * chart stopped setting), else the live value → the value the API server quotes.
 */
function immutableFields(
  causes: { message?: string; field?: string }[],
  live: KubeObject | undefined,
  rendered: KubeObject,
  removed: RemovedField[]
): string[] {
  const fields: string[] = []
  const secret = isSecret(rendered)
  for (const cause of causes) {
    if (!cause.field || !IMMUTABLE.test(cause.message ?? '')) continue
    const field = cause.field
    const changes = [
      ...(secret ? secretChanges(live, rendered, field) : differences(valueAt(live, field), valueAt(rendered, field), field, true)),
      ...removed.filter((r) => r.path === field || r.path.startsWith(`${field}.`) || r.path.startsWith(`${field}[`)).map((r) => removedLine(r, secret))
    ]
    // StatefulSets name the allowed fields in the message ('replicas', 'template', …): not among the immutable ones.
    const allowed = [...(cause.message ?? '').matchAll(/'(\w+)'/g)].map((m) => `${cause.field}.${m[1]}`)
    const immutable = changes.filter((c) => !allowed.some((a) => c.startsWith(a)))
    if (immutable.length > 0) fields.push(...immutable)
    else {
      const quoted = /Invalid value: (.*): (?:field is immutable|may not change once set)/.exec(cause.message ?? '')?.[1]
      const before = valueAt(live, cause.field)
      const known = !secret && quoted !== undefined && quoted.length <= 60 && before !== undefined
      fields.push(known ? `${cause.field}: ${show(before)} → ${quoted}` : cause.field)
    }
  }
  return fields
}

/**
 * What the rendering changes in a StatefulSet's pod template (what the chart sets, and what a
 * three-way patch removes), which its controller rolls out; none under the OnDelete strategy,
 * which replaces no pod by itself.
 */
function templateChanges(live: KubeObject | undefined, rendered: KubeObject, removed: RemovedField[]): string[] {
  const path = 'spec.template'
  if (valueAt(rendered, 'spec.updateStrategy.type') === 'OnDelete') return []
  return [
    ...differences(valueAt(live, path), valueAt(rendered, path), path, true),
    ...removed.filter((r) => r.path.startsWith(`${path}.`)).map((r) => removedLine(r, false))
  ]
}

/** A refused dry-run write, classified. `live` is undefined for a create; `removed`: what a three-way patch removed. */
export function classifyRefusal(refusal: Refusal, live: KubeObject | undefined, rendered: KubeObject, removed: RemovedField[] = []): Verdict {
  const verdict = refusalVerdict(refusal, live, rendered, removed)
  // The messages are the API server's (or a webhook's): only redaction keeps a quoted value out.
  return isSecret(rendered) ? redactSecretValues(verdict, secretValues([live, rendered], removed)) : verdict
}

/**
 * RBAC's escalation check (pkg/registry/rbac/validation ConfirmNoEscalation): a Role or
 * ClusterRole, or a binding to one, that grants what the writer does not hold itself (and may
 * neither `escalate` nor `bind`); an aggregationRule takes cluster-admin's.
 */
const ESCALATION = /is attempting to grant RBAC permissions not currently held/
const AGGREGATION = /must have cluster-admin privileges to use the aggregationRule/

function refusalVerdict(refusal: Refusal, live: KubeObject | undefined, rendered: KubeObject, removed: RemovedField[]): Verdict {
  const status = statusOf(refusal.body)
  const message = status.message ?? ''
  const causes = status.details?.causes ?? []
  const webhook = /admission webhook "([^"]+)" denied the request:?\s*(.*)/s.exec(message)
  if (webhook) return { kind: 'denied', by: `admission webhook ${webhook[1]}`, message: webhook[2] || message }
  const policy = /ValidatingAdmissionPolicy '([^']+)'(?: with binding '([^']+)')? denied request:?\s*(.*)/s.exec(message)
  if (policy)
    return { kind: 'denied', by: `ValidatingAdmissionPolicy ${policy[1]}${policy[2] ? ` (binding ${policy[2]})` : ''}`, message: policy[3] || message }
  const noDryRun = /admission webhook "([^"]+)" does not support dry run/.exec(message)
  if (noDryRun) return { kind: 'not-checked', why: `admission webhook ${noDryRun[1]} does not support dry run` }
  const uncallable = /failed calling webhook "([^"]+)"/.exec(message)
  if (uncallable) return { kind: 'not-checked', why: `admission webhook ${uncallable[1]} could not be called (${refusal.status}): ${message}` }
  switch (refusal.status) {
    case 404:
      // A Status saying the object is gone (deleted since it was read) is no missing kind.
      if (status.reason === 'NotFound' && !/could not find the requested resource/.test(message)) return { kind: 'not-checked', why: `404 ${message}` }
      return { kind: 'not-served', what: `${rendered.kind} in ${rendered.apiVersion}` }
    case 403:
      // RBAC's refusal is about us; any other 403 (a quota, a terminating namespace) is the upgrade's.
      if (/cannot \S+ resource/.test(message)) return { kind: 'not-checked', why: `our credentials may not: ${message}` }
      // So is its escalation check: the dry run writes as us, and Helm's credentials may hold what ours do not.
      if (ESCALATION.test(message))
        return { kind: 'not-checked', why: `our credentials may not grant the permissions this ${rendered.kind} grants: ${message}` }
      if (AGGREGATION.test(message))
        return { kind: 'not-checked', why: `our credentials may not grant what an aggregationRule gathers (only cluster-admin may): ${message}` }
      return { kind: 'denied', by: /exceeded quota/.test(message) ? 'a ResourceQuota' : 'admission', message }
    case 409: {
      const conflicts = causes.filter((c) => c.reason === 'FieldManagerConflict')
      if (conflicts.length === 0) return { kind: 'not-checked', why: `409 ${message}` }
      const managers = [...new Set(conflicts.map((c) => /conflict with "([^"]+)"/.exec(c.message ?? '')?.[1] ?? c.message ?? ''))]
      return { kind: 'conflict', fields: conflicts.map((c) => c.field ?? ''), managers }
    }
    case 400:
    case 422:
    case 500: {
      const fields = immutableFields(causes, live, rendered, removed)
      if (fields.length > 0 || (causes.length === 0 && IMMUTABLE.test(message))) {
        const template = rendered.kind === 'StatefulSet' ? templateChanges(live, rendered, removed) : []
        return { kind: 'immutable', fields, message, ...(template.length > 0 ? { template } : {}) }
      }
      // A body the kind's schema refuses (an unknown field under server-side apply) answers 500.
      if (refusal.status !== 500 || /failed to create typed patch object/.test(message))
        return { kind: 'invalid', fields: causes.map((c) => c.field ?? '').filter((f) => f !== ''), message }
      return { kind: 'not-checked', why: `500 ${message}` }
    }
    default:
      return { kind: 'not-checked', why: `${refusal.status} ${message}` }
  }
}
