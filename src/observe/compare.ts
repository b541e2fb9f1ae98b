// Whether a rendered Job could take the live one's place the way `helm upgrade` will write it: a
// server-side dry run of the same kind of write, and the verdict in words for the summary.
//
// Helm 4 upgrades a release it installed with server-side apply by applying each object as field
// manager `helm`, without forcing conflicts: the dry run does exactly that, so it meets the
// conflicts the upgrade will. Helm 3 (and Helm 4 on a release installed client-side) patches
// instead: a dry-run replace by the rendered Job then runs the same immutability check.
import type { V1Job } from '@kubernetes/client-node'
import type { DryRunMethod, JobsClient } from '../kube/client.ts'
import type { ManifestDifference } from './observed.ts'
import { cut } from '../text/shorten.ts'
import { summarizeChanges, templateDiff } from './template-diff.ts'

/** The field manager Helm's command line writes as (Helm 4 sets it in cmd/helm). */
export const HELM_FIELD_MANAGER = 'helm'

/** Helm server-side applied the live Job (Helm 4's default), so its next upgrade applies it again. */
export function appliedByHelm(live: V1Job): boolean {
  return (live.metadata?.managedFields ?? []).some((m) => m.manager === HELM_FIELD_MANAGER && m.operation === 'Apply' && !m.subresource)
}

// Labels the API server generates into a Job's pod template at creation (with its selector).
const GENERATED_TEMPLATE_LABELS = ['batch.kubernetes.io/controller-uid', 'batch.kubernetes.io/job-name', 'controller-uid', 'job-name']

/**
 * The rendered Job as a full replacement of the live one, for a server-side dry run: the API
 * server then applies its own defaults to the rendered template and runs its own immutability
 * check, so "identical" means exactly what the upgrade will meet. Only what the API server
 * generated at creation (selector, controller labels) is carried over.
 */
function replacementFor(rendered: V1Job, live: V1Job): V1Job {
  const liveLabels = live.spec?.template?.metadata?.labels ?? {}
  const generated = Object.fromEntries(GENERATED_TEMPLATE_LABELS.filter((k) => liveLabels[k] !== undefined).map((k) => [k, liveLabels[k]]))
  const template = rendered.spec?.template ?? { spec: { containers: [] } }
  return {
    ...rendered,
    metadata: {
      ...live.metadata,
      labels: rendered.metadata?.labels,
      annotations: { ...live.metadata?.annotations, ...rendered.metadata?.annotations },
      managedFields: undefined,
      // Jobs allow an update without one: the dry run must not fail because the Job changed since it was read.
      resourceVersion: undefined
    },
    spec: {
      ...rendered.spec,
      template: { ...template, metadata: { ...template.metadata, labels: { ...template.metadata?.labels, ...generated } } },
      selector: rendered.spec?.selector ?? live.spec?.selector
    }
  } as V1Job
}

/** The dry run the upgrade's write corresponds to, and the body to send. */
export function dryRunFor(rendered: V1Job, live: V1Job): { method: DryRunMethod; body: V1Job } {
  if (!appliedByHelm(live)) return { method: 'replace', body: replacementFor(rendered, live) }
  // `helm upgrade --force-conflicts` forces; job-sweeper assumes the default, as a plain upgrade runs.
  return { method: { apply: { fieldManager: HELM_FIELD_MANAGER, force: false } }, body: rendered }
}

const STATUS_WORDS: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  422: 'Unprocessable',
  500: 'Internal Server Error'
}
/** The longest detail of a conflict shown in the summary; the log has the API server's message. */
const MAX_DETAIL = 160

/** A conflict's message on one line (the API server lists the fields one per line), cut to MAX_DETAIL. */
function oneLine(text: string): string {
  return cut(text.replace(/\s*\n\s*-?\s*/g, ' ').trim(), MAX_DETAIL)
}

/** Why the dry run could not tell, in a few words: `403 Forbidden`, `admission webhook "policy.example" …`. */
function whyUnknown(status: number, message: string): string {
  // A webhook's refusal reads `admission webhook "x" denied…`, its failure `failed calling webhook "x": …`.
  const webhook = /(?:admission|calling) webhook "([^"]+)"/.exec(message)?.[1]
  const words = `${status} ${STATUS_WORDS[status] ?? 'error'}`
  if (webhook) return `${words} from admission webhook ${webhook}${/dry ?run/i.test(message) ? ', which does not support dry run' : ''}`
  return words
}

/**
 * How the live Job differs from the rendered one, undefined when it does not. A refusal the dry
 * run cannot explain (403, a webhook that cannot dry-run, …) is `unknown`: the planner treats the
 * Job as changed, as release scope would. Every refusal's full message goes to `log`.
 */
export async function compareWithRendered(
  client: JobsClient,
  namespace: string,
  rendered: V1Job,
  live: V1Job,
  log: (m: string) => void
): Promise<ManifestDifference | undefined> {
  const { method, body } = dryRunFor(rendered, live)
  const answer = await client.dryRunJob(namespace, body, method)
  if (answer.accepted) return undefined
  const verb = method === 'replace' ? 'replace' : `apply as ${method.apply.fieldManager}`
  log(`Job ${namespace}/${live.metadata?.name}: the dry-run ${verb} was refused (${answer.status}): ${answer.message}`)
  if (answer.status === 422) {
    const changes = templateDiff(live.spec?.template, rendered.spec?.template)
    return { kind: 'differs', detail: changes.length > 0 ? summarizeChanges(changes) : 'the API server refuses the change (see the log)' }
  }
  if (answer.status === 409 && method !== 'replace') {
    return { kind: 'conflict', detail: oneLine(answer.message.replace(/^Apply failed with \d+ conflicts?: /, '')) }
  }
  return { kind: 'unknown', detail: whyUnknown(answer.status, answer.message) }
}
