// Whether a keeper's archive is complete (src/plan/archive-state.ts): every container run the
// Job's status counts has its whole log in the store; otherwise incomplete, each gap named.
import { archiveState, podsEvidence, stateWords, type ArchiveEvidence, type ArchiveGapReason } from '../../src/plan/archive-state.ts'

const pod = (name: string, ended = true, restarts: Record<string, number> = { main: 0 }): ArchiveEvidence['pods'][number] => ({
  name,
  ended,
  restarts: Object.entries(restarts).map(([container, count]) => ({ container, count }))
})
const log = (pod: string, container = 'main', truncated = false): { file: string; truncated: boolean } => ({
  file: `prod/app-migrate/${pod}/${container}.log`,
  truncated
})

const previousLog = (pod: string): { file: string; truncated: boolean } => ({ file: `prod/app-migrate/${pod}/main.previous.log`, truncated: false })
const runLog = (pod: string, id: string, container = 'main'): { file: string; truncated: boolean } => ({
  file: `prod/app-migrate/${pod}/${container}.run-${id}.log`,
  truncated: false
})
/** A pod whose main container restarted `count` times, its current and previous runs' IDs given. */
const run = (name: string, count: number, current: string, previous: string): ArchiveEvidence['pods'][number] => ({
  name,
  ended: true,
  restarts: [{ container: 'main', count, current, previous }]
})

const cases: [string, ArchiveEvidence, 'complete' | 'incomplete', ArchiveGapReason[], string][] = [
  ['failed Job, its one pod listed and its log stored → complete', { failed: 1, pods: [pod('p1')], files: [log('p1')] }, 'complete', [], 'complete'],
  [
    'backoffLimit 2: three failed pods, all listed and stored → complete',
    { failed: 3, pods: [pod('p1'), pod('p2'), pod('p3')], files: [log('p1'), log('p2'), log('p3')] },
    'complete',
    [],
    'complete'
  ],
  [
    'its pods deleted before any archive (none listed, nothing stored) → incomplete, pod gone',
    { failed: 1, pods: [], files: [] },
    'incomplete',
    ['pod-gone'],
    'incomplete: 1 pod(s) gone before their logs were read'
  ],
  [
    'two of three failed pods gone, one listed → incomplete, 2 pods gone',
    { failed: 3, pods: [pod('p3')], files: [log('p3')] },
    'incomplete',
    ['pod-gone'],
    'incomplete: 2 pod(s) gone before their logs were read'
  ],
  [
    'a pod gone since, but its log saved while it terminated → complete',
    { failed: 2, pods: [pod('p2')], files: [log('p2'), log('p1')] },
    'complete',
    [],
    'complete'
  ],
  [
    'a running Job deleted (no pod counted as ended yet), its running pod stored → complete',
    { pods: [pod('p1', false)], files: [log('p1')] },
    'complete',
    [],
    'complete'
  ],
  [
    'a log cut at max-log-bytes → incomplete, cut (it was `complete, 1 log(s) cut` before)',
    { succeeded: 1, pods: [pod('p1')], files: [log('p1', 'main', true)] },
    'incomplete',
    ['cut'],
    'incomplete: 1 log(s) cut at max-log-bytes'
  ],
  [
    'a container restarted 3 times: the runs before the previous one are not kept by the node → incomplete, run gone',
    { succeeded: 1, pods: [pod('p1', true, { main: 3 })], files: [log('p1'), { file: 'prod/app-migrate/p1/main.previous.log', truncated: false }] },
    'incomplete',
    ['run-gone'],
    'incomplete: 2 container run(s) the node no longer kept'
  ],
  [
    'restarted once: its previous run and this one stored → complete',
    { succeeded: 1, pods: [pod('p1', true, { main: 1 })], files: [log('p1'), { file: 'prod/app-migrate/p1/main.previous.log', truncated: false }] },
    'complete',
    [],
    'complete'
  ],
  [
    'restarted in place 3 times (OnFailure), its two earlier runs saved as they ended → complete',
    {
      succeeded: 1,
      pods: [run('p1', 3, 'cccccccccccc00', 'bbbbbbbbbbbb00')],
      files: [log('p1'), previousLog('p1'), runLog('p1', 'aaaaaaaaaaaa'), runLog('p1', '999999999999')]
    },
    'complete',
    [],
    'complete'
  ],
  [
    'restarted in place 3 times, one earlier run saved as it ended, and the previous run saved so too (not counted twice) → incomplete, 1 run gone',
    {
      succeeded: 1,
      pods: [run('p1', 3, 'cccccccccccc00', 'bbbbbbbbbbbb00')],
      files: [log('p1'), runLog('p1', 'bbbbbbbbbbbb'), runLog('p1', 'aaaaaaaaaaaa')]
    },
    'incomplete',
    ['run-gone'],
    'incomplete: 1 container run(s) the node no longer kept'
  ],
  [
    "a run file of another container, or another pod, does not stand for this container's runs → incomplete",
    {
      succeeded: 1,
      pods: [run('p1', 2, 'cccccccccccc00', 'bbbbbbbbbbbb00')],
      files: [log('p1'), previousLog('p1'), runLog('p1', 'aaaaaaaaaaaa', 'sidecar'), runLog('p0', 'aaaaaaaaaaaa')]
    },
    'incomplete',
    ['run-gone'],
    'incomplete: 1 container run(s) the node no longer kept'
  ],
  [
    'the node no longer had a previous run → incomplete, run gone',
    { succeeded: 1, pods: [pod('p1', true, { main: 1 })], files: [log('p1')], gone: ['p1/main (previous run)'] },
    'incomplete',
    ['run-gone'],
    'incomplete: 1 container run(s) the node no longer kept'
  ],
  [
    'a log that could not be read, and one pod gone → incomplete, both reasons',
    { failed: 2, pods: [pod('p2')], files: [], failures: ['cannot save the log of p2/main: 500 Internal Server Error'] },
    'incomplete',
    ['pod-gone', 'read-failed'],
    'incomplete: 1 pod(s) gone before their logs were read; 1 log(s) not read or not stored'
  ]
]

test.each(cases)('%s', (_name, evidence, state, reasons, words) => {
  const result = archiveState(evidence)
  expect(result.state).toBe(state)
  expect(result.gaps.map((g) => g.reason)).toEqual(reasons)
  expect(stateWords(result)).toBe(words)
})

test('a gap names what is missing: the pods gone, the container and its runs, the log cut', () => {
  expect(archiveState({ failed: 3, pods: [pod('p3')], files: [log('p3')] }).gaps[0].what).toBe(
    '2 of its 3 ended pod(s): gone before their logs were read (deleted, or garbage-collected)'
  )
  expect(archiveState({ succeeded: 1, pods: [pod('p1', true, { init: 2 })], files: [log('p1', 'init'), log('p1', 'init')] }).gaps[0].what).toBe(
    'p1/init: 1 of its 1 run(s) before its previous one, which the node no longer keeps, not saved as they ended'
  )
  expect(archiveState({ succeeded: 1, pods: [pod('p1')], files: [log('p1', 'main', true)] }).gaps[0].what).toBe('p1/main.log: cut at max-log-bytes')
})

test('podsEvidence: a pod is ended when Succeeded or Failed; restarts of init and main containers', () => {
  expect(
    podsEvidence([
      {
        metadata: { name: 'p1' },
        status: {
          phase: 'Failed',
          initContainerStatuses: [{ name: 'wait', restartCount: 2, image: 'x', imageID: '', ready: false }],
          containerStatuses: [{ name: 'main', restartCount: 0, image: 'x', imageID: '', ready: false }]
        }
      },
      { metadata: { name: 'p2' }, status: { phase: 'Running' } },
      {
        metadata: { name: 'p3' },
        status: {
          phase: 'Running',
          containerStatuses: [
            {
              name: 'main',
              restartCount: 1,
              image: 'x',
              imageID: '',
              ready: true,
              containerID: 'containerd://b2',
              state: { running: {} },
              lastState: { terminated: { exitCode: 1, containerID: 'containerd://a1' } }
            }
          ]
        }
      }
    ])
  ).toEqual([
    {
      name: 'p1',
      ended: true,
      restarts: [
        { container: 'wait', count: 2 },
        { container: 'main', count: 0 }
      ]
    },
    { name: 'p2', ended: false, restarts: [] },
    { name: 'p3', ended: false, restarts: [{ container: 'main', count: 1, current: 'b2', previous: 'a1' }] }
  ])
})
