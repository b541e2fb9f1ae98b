// A report that cannot be written after the phase did its work (logs-dir filled up, or its report
// file's place taken): the error says what the run deleted, the warnings are still emitted, the
// summary and outputs are still written, and (action) the pre phase is still recorded as completed,
// so that the post step gives the upgrade's Jobs their TTLs.
import { mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { outputNames, runAction } from './action.ts'
import { runCli } from './bin.ts'
import { getJob } from './cluster/testenv.ts'
import { finishedReleaseJob, release, useScenario } from './scenario.ts'

const scenario = useScenario('report-write')

/** A logs-dir that can be written, but where the report file cannot be: a directory has its name. */
function logsDirWithoutRoomForTheReport(phase: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'report-write-'))
  mkdirSync(join(dir, `job-sweeper-${phase}.json`))
  return dir
}

test('action pre: the report file cannot be written after two deletes; the error lists them, warnings and state are kept', async () => {
  const ns = scenario.ns
  await finishedReleaseJob(ns, `${release}-migrate`)
  await finishedReleaseJob(ns, `${release}-seed`)
  const logsDir = logsDirWithoutRoomForTheReport('pre')
  // max-log-bytes 1: each saved log is cut, a warning per Job.
  const run = await runAction({ release, namespace: ns, 'logs-dir': logsDir, 'harvest-logs': 'all', 'max-log-bytes': '1' })
  expect(run.code).toBe(1)
  const error = run.stdout.match(/^::error::.*$/m)?.[0] ?? ''
  expect(error).toContain(`could not write the report in logs-dir '${logsDir}' (`)
  expect(error).toContain(`it deleted 2 Job(s): ${ns}/${release}-migrate, ${ns}/${release}-seed`)
  expect(error).not.toContain('Nothing was changed')
  expect(run.stdout.match(/^::warning::logs of Job .* longer than max-log-bytes.*$/gm)).toHaveLength(2)
  expect(outputNames(run, 'pruned')).toEqual([`${release}-migrate`, `${release}-seed`])
  expect(run.summary).toContain(`${release}-migrate`)
  // The phase itself succeeded: the post step will run.
  expect(run.state['pre-phase']).toBe('completed')
  expect(await getJob(ns, `${release}-migrate`)).toBeUndefined()
})

test('CLI: the same; the text report is still printed, with the error that lists what was deleted', async () => {
  const ns = scenario.ns
  await finishedReleaseJob(ns, `${release}-seed`)
  const logsDir = logsDirWithoutRoomForTheReport('pre')
  const run = await runCli(['pre', '--release', release, '--namespace', ns, '--logs-dir', logsDir])
  expect(run.code).toBe(3)
  expect(run.stdout).toContain(`could not write the report in logs-dir '${logsDir}' (`)
  expect(run.stdout).toContain(`it deleted 1 Job(s): ${ns}/${release}-seed`)
  expect(run.stdout).toContain('Report: not written')
  expect(await getJob(ns, `${release}-seed`)).toBeUndefined()
})
