// No line from the cluster can become a workflow command: pod log lines streamed live, failed Jobs'
// log tails in the terminal report and the job summary. `runnerCommands` reads output as the
// GitHub runner does (actions/runner ActionCommand.cs, ActionCommandManager.cs): lines end at \n,
// \r or \r\n; `::name::` after leading white space (TryParseV2), or `##[name]` anywhere (TryParse),
// for a registered command name.
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node'
import type { JobOutcome, RunResult } from '../../src/execute/outcome.ts'
import { buildReport, summarize } from '../../src/report/summary.ts'
import { renderText } from '../../src/report/text.ts'
import { inert } from '../../src/text/workflow-commands.ts'
import { executorOf } from '../fake/executor.ts'
import { newJob } from './jobs.ts'

const REGISTERED = new Set([
  ...['set-env', 'set-output', 'save-state', 'add-mask', 'add-path', 'add-matcher', 'remove-matcher'],
  ...['debug', 'warning', 'error', 'notice', 'group', 'endgroup', 'echo', 'stop-commands']
])
/** What .NET's TrimStart trims (char.IsWhiteSpace), which JavaScript's trimStart() does not all trim (U+0085). */
const DOTNET_LEADING_SPACE = /^[\s\u0085]+/

/** The workflow commands the runner would read in `output`: `name` of each. */
function runnerCommands(output: string): string[] {
  const found: string[] = []
  for (const line of output.split(/\r\n|\r|\n/)) {
    const v2 = line.replace(DOTNET_LEADING_SPACE, '')
    if (v2.startsWith('::')) {
      const end = v2.indexOf('::', 2)
      const name = end < 0 ? '' : v2.slice(2, end).split(' ')[0]
      if (REGISTERED.has(name)) {
        found.push(name)
        continue
      }
    }
    const start = line.indexOf('##[')
    const end = start < 0 ? -1 : line.indexOf(']', start)
    if (end >= 0 && REGISTERED.has(line.slice(start + 3, end).split(' ')[0])) found.push(line.slice(start + 3, end).split(' ')[0])
  }
  return found
}

/** Log lines a pod may print that the runner would take as commands. */
const HOSTILE = [
  '::set-output name=migrated::true',
  '   ::add-mask::hunter2',
  '\u0085::stop-commands::pwned',
  '\t::error file=app.js,line=1::boom',
  'progress 50% ##[set-output name=x;]y',
  '##[add-mask]secret',
  '##[group]fake group',
  'done\r::save-state name=isPost::true',
  'ok\r##[endgroup]'
]
/** What a reader sees: the zero-width spaces inert() adds are invisible. */
const visible = (text: string): string => text.replace(/\u200b/g, '')

test('positive control: the detector reads every hostile line, raw, as the runner would: one command each', () => {
  expect(HOSTILE.map((l) => runnerCommands(l))).toEqual([
    ['set-output'],
    ['add-mask'],
    ['stop-commands'],
    ['error'],
    ['set-output'],
    ['add-mask'],
    ['group'],
    ['save-state'],
    ['endgroup']
  ])
  expect(runnerCommands('plain ::text:: and ## [x]')).toEqual([])
})

test('inert(): no hostile line is a command, and each reads the same (line breaks become spaces)', () => {
  for (const line of HOSTILE) {
    expect(runnerCommands(inert(line))).toEqual([])
    expect(visible(inert(line))).toBe(line.replace(/\r/g, ' '))
  }
  expect(inert('an ordinary line: 50% done')).toBe('an ordinary line: 50% done')
})

const runningMain: V1ContainerStatus = { name: 'main', image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: new Date() } } }
const pod: V1Pod = {
  metadata: { name: 'app-migrate-x1', creationTimestamp: new Date() },
  spec: { containers: [{ name: 'main', image: 'x' }] },
  status: { phase: 'Running', containerStatuses: [runningMain] }
}

test('streamed live: a pod’s log lines print prefixed and inert, none read as a command, every one shown', async () => {
  const migrate = newJob({ name: 'app-migrate', release: 'app', status: 'running' })
  const ex = executorOf({ release: 'app', 'harvest-logs': 'none', 'on-running': 'wait', 'wait-timeout': '10m' }, [migrate])
  ex.client.addPod(migrate, pod, { main: `${HOSTILE.join('\n')}\n` })
  void ex.clock.sleep(60_000).then(() => ex.client.finish('prod', 'app-migrate', 'Complete'))
  const result = await ex.execute()
  expect(result.errors).toEqual([])
  const log = ex.log.join('\n')
  // Positive control: the lines did reach the log (the detector would have read them raw).
  for (const line of HOSTILE) expect(visible(log)).toContain(`prod/app-migrate/app-migrate-x1/main | ${line.replace(/\r/g, ' ')}`)
  expect(runnerCommands(HOSTILE.join('\n'))).toHaveLength(HOSTILE.length)
  expect(runnerCommands(log)).toEqual([])
})

function failedWithTail(lines: string[]): RunResult {
  const failed: JobOutcome = {
    namespace: 'prod',
    name: 'app-migrate',
    status: 'failed',
    ageSeconds: 90,
    action: 'delete',
    result: 'pruned',
    waited: false,
    reason: 'r',
    logs: { files: [{ file: 'x.log', bytes: 3, truncated: false }], failures: [], tails: [{ file: 'x.log', lines }] }
  }
  return { phase: 'pre', namespace: 'prod', dryRun: false, outcomes: [failed], errors: [], warnings: [] }
}

test('log tails, in the terminal report and in the job summary (printed to the log outside a runner): no command', () => {
  const result = failedWithTail(HOSTILE)
  const text = renderText(summarize(result))
  const markdown = buildReport(result).markdown
  // Positive control: the tail is there, each line in its place.
  expect(visible(text)).toContain(`  | ${HOSTILE[0]}`)
  expect(visible(markdown)).toContain(`<pre>${HOSTILE[0]}\n`)
  expect(visible(markdown)).toContain('progress 50% ##[set-output name=x;]y')
  expect(runnerCommands(text)).toEqual([])
  expect(runnerCommands(markdown)).toEqual([])
})
