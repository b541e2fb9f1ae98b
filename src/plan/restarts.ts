// The runs of a container that restarts in place (a pod of restartPolicy OnFailure, a native
// sidecar) before its pod ends. The kubelet keeps a container's current run and its previous one
// only: a run before those is gone once the next one ends. So the keeper saves each run as it ends,
// while it is the container's previous run (lastState.terminated), into a file named by the run's
// container ID. Pure: the runs to save, the file of each, and whether a read was of the run meant.
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node'

/** A container run that ended while its pod goes on: its container restarted in place. */
export interface EndedRun {
  pod: string
  container: string
  /** The run's container ID, without its runtime's scheme (`containerd://`). */
  id: string
}

/** How long after a read of a previous run the pod is listed again, to learn whether another run ended while it was read. */
export const READ_LAG_MS = 2_000

/** A container ID without its scheme: `containerd://3f…` is `3f…`. */
export const runId = (containerId: string | undefined): string | undefined => containerId?.replace(/^[a-z0-9-]+:\/\//, '') || undefined

/** The pod's container statuses, init containers first. */
export const statusesOf = (pod: V1Pod): V1ContainerStatus[] => [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]

const statusOf = (pod: V1Pod, container: string): V1ContainerStatus | undefined => statusesOf(pod).find((s) => s.name === container)

/** The ID of the container's previous run (the one the kubelet serves with `previous=true`), if it has one. */
export const previousRunId = (pod: V1Pod, container: string): string | undefined => runId(statusOf(pod, container)?.lastState?.terminated?.containerID)

/** The ID of the container's current run (running, or ended), if it has one. */
export const currentRunId = (pod: V1Pod, container: string): string | undefined => {
  const status = statusOf(pod, container)
  return runId(status?.state?.terminated?.containerID ?? status?.containerID)
}

const podName = (pod: V1Pod): string => pod.metadata?.name ?? ''

/** The file of a run under its pod's folder: `<container>.run-<the first 12 characters of its ID>.log`, as crictl shortens IDs. */
export const runFile = (container: string, id: string): string => `${container}.run-${id.slice(0, 12)}.log`

/** The container and short run ID a file name (`…/<pod>/<container>.run-<id>.log`) is of, or undefined for any other file. */
export function runOfFile(file: string): { pod: string; container: string; id: string } | undefined {
  const [pod, name] = file.split('/').slice(-2)
  const m = /^(.+)\.run-([^./]+)\.log$/.exec(name ?? '')
  return m && pod !== undefined ? { pod, container: m[1], id: m[2] } : undefined
}

/** The runs that ended in pods still going (not Succeeded or Failed), whose ID is not in `saved` (the keys are `<pod>/<container>/<id>`). */
export function endedRuns(pods: V1Pod[], saved: ReadonlySet<string>): EndedRun[] {
  const runs: EndedRun[] = []
  for (const pod of pods) {
    // An ended pod's previous run is read with its archive.
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue
    for (const status of statusesOf(pod)) {
      const id = runId(status.lastState?.terminated?.containerID)
      if (id !== undefined && !saved.has(runKey({ pod: podName(pod), container: status.name, id })))
        runs.push({ pod: podName(pod), container: status.name, id })
    }
  }
  return runs
}

/** The key of a run in a set of those saved. */
export const runKey = (run: EndedRun): string => `${run.pod}/${run.container}/${run.id}`

/**
 * Whether a read of `run` (as the previous run) read that run, from the pods listed READ_LAG_MS
 * after it: `confirmed` while the container's previous run is still `run` (no run ended since the
 * read began, so the kubelet served that one); `doubt` when another run ended (the read may have
 * been of it); `unknown` when the pod is no longer listed.
 */
export function readRunVerdict(run: EndedRun, pods: V1Pod[]): 'confirmed' | 'doubt' | 'unknown' {
  const pod = pods.find((p) => podName(p) === run.pod)
  if (!pod) return 'unknown'
  return previousRunId(pod, run.container) === run.id ? 'confirmed' : 'doubt'
}

/**
 * Whether every run of the container before its current one is among `saved` (runKey): its
 * previous run by ID, or, where the pod's status no longer names it (a kubelet clears lastState
 * once the pod ended), as many runs saved as the container restarted. Then its previous run is not
 * read again (the kubelet may have removed it: that would read as a run gone).
 */
export function previousSaved(pod: V1Pod, container: string, saved: ReadonlySet<string> | undefined): boolean {
  if (!saved || saved.size === 0) return false
  const id = previousRunId(pod, container)
  if (id !== undefined) return saved.has(runKey({ pod: podName(pod), container, id }))
  const restarts = statusOf(pod, container)?.restartCount ?? 0
  const prefix = runKey({ pod: podName(pod), container, id: '' })
  return restarts > 0 && [...saved].filter((k) => k.startsWith(prefix)).length >= restarts
}
