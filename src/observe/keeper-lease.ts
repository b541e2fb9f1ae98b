// With keeper-namespace: whether a job-sweeper keeper is running, read once from its Lease
// (job-sweeper-keeper, which the leading keeper renews every 10 s and annotates with what it keeps).
// Post adds the keeper's finalizer only to the Jobs such a keeper takes (plan/keeper.ts keeperTakes);
// pre and sweep let go of the holds no keeper runs to release (plan/keeper.ts orphanedHold).
import type { V1Lease } from '@kubernetes/client-node'
import type { JobsClient } from '../kube/jobs-client.ts'
import { apiErrorMessage, statusCode } from '../kube/errors.ts'
import { KEEPER_LEASE, KEEPER_SCOPE_ANNOTATION, LEASE_DURATION_SECONDS } from '../kube/lease.ts'
import { ClusterUnreachable } from '../kube/retry.ts'
import { INPUT } from '../settings/inputs.ts'

/** A keeper's Lease as `post` reads it: who holds it, until when, and what it keeps. */
export interface KeeperLease {
  holder?: string
  /** When it was last renewed (or taken), and for how long that holds. */
  renewedAt?: Date
  durationSeconds: number
  namespaces: string[]
  selector?: string
}

/** The keeper's Lease as a phase read it: none there (`lease` undefined), or it could not be read (`unread`). */
export interface KeeperPresence {
  namespace: string
  lease?: KeeperLease
  unread?: boolean
}

/** The keeper's Lease in `namespace` as post reads it: undefined when there is none. */
export function keeperLeaseOf(lease: V1Lease | undefined): KeeperLease | undefined {
  if (lease === undefined) return undefined
  const renewed = lease.spec?.renewTime ?? lease.spec?.acquireTime
  const annotations = lease.metadata?.annotations ?? {}
  return {
    holder: lease.spec?.holderIdentity || undefined,
    renewedAt: renewed === undefined ? undefined : new Date(renewed),
    durationSeconds: lease.spec?.leaseDurationSeconds ?? LEASE_DURATION_SECONDS,
    namespaces: (annotations[KEEPER_SCOPE_ANNOTATION.namespaces] ?? '').split(',').filter((n) => n !== ''),
    selector: annotations[KEEPER_SCOPE_ANNOTATION.selector]
  }
}

/**
 * Reads the keeper's Lease; a refusal (403: no `get` on leases there) or another API error is a
 * warning, and then post adds no finalizer, and pre and sweep let go of no hold. Only an
 * unreachable cluster throws.
 */
export async function readKeeperLease(client: JobsClient, namespace: string, warn: (message: string) => void, post: boolean): Promise<KeeperPresence> {
  try {
    return { namespace, lease: keeperLeaseOf(await client.getLease(namespace, KEEPER_LEASE)) }
  } catch (e) {
    if (e instanceof ClusterUnreachable) throw e
    const code = statusCode(e)
    warn(
      `${INPUT.keeperNamespace} '${namespace}': cannot read the keeper's Lease ${KEEPER_LEASE} (${code === undefined ? '' : `${code} `}${apiErrorMessage(e)}${code === 403 ? "; the credentials need 'get' on leases there" : ''}): ${post ? 'no Job is held for the keeper' : 'no hold of the keeper’s is let go'}`
    )
    return { namespace, unread: true }
  }
}
