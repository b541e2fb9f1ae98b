// The fake node and the kwok configuration: how tests make Job pods succeed, fail or keep running.
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { V1Node } from '@kubernetes/client-node'

const here = dirname(fileURLToPath(import.meta.url))

export const FAKE_NODE_NAME = 'kwok-node-0'
/** Label on a pod template: its pods end Failed with exit code 1 (see kwok-stages.yaml). */
export const FAIL_LABEL = 'job-sweeper.test/fail'
/** Label on a pod template: its pods stay Running until the label is removed. */
export const HOLD_LABEL = 'job-sweeper.test/hold'
/** Label on a pod template: once deleted, its pods stay Terminating until the label is removed. */
export const LINGER_LABEL = 'job-sweeper.test/linger'
/** Annotation on a pod template: its pods stay Running this long (a Go duration, e.g. 5s). */
export const RUN_FOR_ANNOTATION = 'job-sweeper.test/run-for'
/** A node label no node has: a pod that asks for it stays Pending, Unschedulable, by the real scheduler. */
export const NO_SUCH_NODE_LABEL = 'job-sweeper.test/no-such-node'
/** What every fake container logs (kwok serves it through the API server's pods/log). */
export const FAKE_POD_LOG = join(here, 'pod.log')

/**
 * Pods the fake node takes. Job pods request nothing, so only this count limits scheduling:
 * benchmarks run thousands of Jobs (one pod each) at once, so it is far above a real node's 110.
 */
export const FAKE_NODE_PODS = 20_000

/** The Node kwok manages: selected by annotation, no taints, room for many pods. */
export function fakeNode(): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: FAKE_NODE_NAME,
      annotations: { 'kwok.x-k8s.io/node': 'fake' },
      labels: { 'kubernetes.io/hostname': FAKE_NODE_NAME, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok' }
    },
    status: { capacity: { cpu: '32', memory: '256Gi', pods: String(FAKE_NODE_PODS) } }
  }
}

/** A container of this name logs 64 KiB (the keeper's benchmark): the file kwok serves, written into the cluster's directory. */
export const LOG_64K_CONTAINER = 'log-64k'

/** What a LOG_64K_CONTAINER logs: 1,024 numbered lines of 64 bytes. */
export const LOG_64K = Array.from({ length: 1024 }, (_, i) => `${String(i + 1).padStart(6, '0')} job: step done, ${'x'.repeat(40)}\n`).join('')

/** kwok's --config (written into `dir`): the stages, plus logs for every pod in every namespace. */
export function kwokConfig(dir: string): string {
  // kwok reads the CRI log format (a time, the stream and a tag before each line).
  const big = join(dir, 'pod-64k.log')
  writeFileSync(big, LOG_64K.replace(/^/gm, '2026-01-01T00:00:00Z stdout F ').replace(/2026-01-01T00:00:00Z stdout F $/, ''))
  const logs = {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'ClusterLogs',
    metadata: { name: 'all-pods' },
    // kwok takes the first group that names the container, or names none.
    spec: { logs: [{ containers: [LOG_64K_CONTAINER], logsFile: big }, { logsFile: FAKE_POD_LOG }] }
  }
  return `${readFileSync(join(here, 'kwok-stages.yaml'), 'utf8')}---\n${JSON.stringify(logs)}\n`
}
