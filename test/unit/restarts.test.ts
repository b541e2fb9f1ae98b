// The runs of a container that restarts in place (src/plan/restarts.ts): which ended runs to save,
// the file of each, and whether a read of a previous run read the run meant.
import type { V1ContainerStatus, V1Job, V1Pod } from '@kubernetes/client-node'
import { toJobRecord } from '../../src/kube/job-record.ts'
import { currentRunId, endedRuns, previousRunId, previousSaved, readRunVerdict, runFile, runId, runKey, runOfFile } from '../../src/plan/restarts.ts'

/** A pod whose container `migrate` is in run `current`, its previous run `previous` (if any), in phase `phase`. */
function pod(name: string, current: string, previous?: string, phase = 'Running', extra: V1ContainerStatus[] = []): V1Pod {
  return {
    metadata: { name },
    status: {
      phase,
      containerStatuses: [
        {
          name: 'migrate',
          image: 'x',
          imageID: '',
          ready: phase === 'Running',
          restartCount: previous ? 1 : 0,
          containerID: `containerd://${current}`,
          state: phase === 'Running' ? { running: {} } : { terminated: { exitCode: 0, containerID: `containerd://${current}` } },
          ...(previous ? { lastState: { terminated: { exitCode: 1, containerID: `containerd://${previous}` } } } : {})
        },
        ...extra
      ]
    }
  }
}

test('runId drops the runtime scheme; the current and previous run IDs come from the container status', () => {
  expect(runId('containerd://3f2a')).toBe('3f2a')
  expect(runId('cri-o://ab')).toBe('ab')
  expect(runId('')).toBeUndefined()
  expect(runId(undefined)).toBeUndefined()
  const p = pod('p', 'b2', 'a1')
  expect(currentRunId(p, 'migrate')).toBe('b2')
  expect(previousRunId(p, 'migrate')).toBe('a1')
  expect(previousRunId(pod('p', 'b2'), 'migrate')).toBeUndefined()
  expect(currentRunId(pod('p', 'c3', 'b2', 'Succeeded'), 'migrate')).toBe('c3')
})

const cases: [string, V1Pod[], string[], string[]][] = [
  ['a running pod whose container restarted: its previous run is to be saved', [pod('p1', 'b2', 'a1')], [], ['p1/migrate/a1']],
  ['that run already saved (or read, or doubted): nothing', [pod('p1', 'b2', 'a1')], ['p1/migrate/a1'], []],
  ['a container that never restarted: nothing', [pod('p1', 'a1')], [], []],
  ['an ended pod: its previous run is read with the archive, not here', [pod('p1', 'c3', 'b2', 'Succeeded'), pod('p2', 'c3', 'b2', 'Failed')], [], []],
  [
    'a native sidecar restarted beside a main container that did not: the sidecar run',
    [
      pod('p1', 'm1', undefined, 'Running', [
        { name: 'proxy', image: 'x', imageID: '', ready: true, restartCount: 1, lastState: { terminated: { exitCode: 137, containerID: 'containerd://s1' } } }
      ])
    ],
    [],
    ['p1/proxy/s1']
  ]
]

test.each(cases)('endedRuns: %s', (_name, pods, saved, runs) => {
  expect(endedRuns(pods, new Set(saved)).map(runKey)).toEqual(runs)
})

test('runFile names a run by the first 12 characters of its ID, and runOfFile reads it back; other files are no run', () => {
  const id = '0123456789abcdef0123'
  expect(runFile('migrate', id)).toBe('migrate.run-0123456789ab.log')
  expect(runOfFile(`prod/app-migrate/uid-1/p1/${runFile('migrate', id)}`)).toEqual({ pod: 'p1', container: 'migrate', id: '0123456789ab' })
  expect(runOfFile('prod/app-migrate/uid-1/p1/migrate.log')).toBeUndefined()
  expect(runOfFile('prod/app-migrate/uid-1/p1/migrate.previous.log')).toBeUndefined()
  expect(runOfFile('prod/app-migrate/uid-1/p1/migrate.never-ran.txt')).toBeUndefined()
})

test('readRunVerdict: confirmed while the read run is still the previous one; doubt once another run ended; unknown with the pod gone', () => {
  const run = { pod: 'p1', container: 'migrate', id: 'a1' }
  expect(readRunVerdict(run, [pod('p1', 'b2', 'a1')])).toBe('confirmed')
  // The pod ended (its last run b2 succeeded) with no other restart: the previous run is still a1.
  expect(readRunVerdict(run, [pod('p1', 'b2', 'a1', 'Succeeded')])).toBe('confirmed')
  expect(readRunVerdict(run, [pod('p1', 'c3', 'b2')])).toBe('doubt')
  expect(readRunVerdict(run, [pod('p2', 'b2', 'a1')])).toBe('unknown')
})

test('toJobRecord: restartsInPlace for restartPolicy OnFailure and for a native sidecar, not for Never', () => {
  const job = (spec: object): V1Job => ({ metadata: { name: 'j', uid: 'u' }, spec: { template: { spec: { containers: [{ name: 'm' }], ...spec } } } })
  expect(toJobRecord(job({ restartPolicy: 'OnFailure' })).restartsInPlace).toBe(true)
  expect(toJobRecord(job({ restartPolicy: 'Never', initContainers: [{ name: 'proxy', restartPolicy: 'Always' }] })).restartsInPlace).toBe(true)
  expect(toJobRecord(job({ restartPolicy: 'Never', initContainers: [{ name: 'wait' }] })).restartsInPlace).toBeUndefined()
  expect(toJobRecord(job({ restartPolicy: 'Never' })).restartsInPlace).toBeUndefined()
})

test('previousSaved: by the previous run ID; with no ID in the status (lastState cleared once the pod ended), by as many runs saved as restarts', () => {
  const saved = new Set(['p1/migrate/a1', 'p1/migrate/b2'])
  expect(previousSaved(pod('p1', 'c3', 'b2', 'Succeeded'), 'migrate', saved)).toBe(true)
  expect(previousSaved(pod('p1', 'c3', 'x9', 'Succeeded'), 'migrate', saved)).toBe(false)
  // The status names no previous run (Kubernetes 1.34 once the pod succeeded), restartCount 2: two runs saved → saved; one → not.
  const cleared = (restarts: number): V1Pod => {
    const p = pod('p1', 'c3', undefined, 'Succeeded')
    const [status] = p.status?.containerStatuses ?? []
    status.restartCount = restarts
    return p
  }
  expect(previousSaved(cleared(2), 'migrate', saved)).toBe(true)
  expect(previousSaved(cleared(2), 'migrate', new Set(['p1/migrate/a1', 'p0/migrate/b2', 'p1/proxy/b2']))).toBe(false)
  expect(previousSaved(cleared(0), 'migrate', saved)).toBe(false)
  expect(previousSaved(cleared(2), 'migrate', undefined)).toBe(false)
})
