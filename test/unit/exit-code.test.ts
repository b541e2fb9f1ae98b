// The CLI's exit code tells a Job's failure (1) from the cluster's or job-sweeper's (3).
import { EXIT, exitCodeOf } from '../../src/report/exit-code.ts'

const failed = 'Job shop/migrate failed; kept for failure-grace 1d so it can be inspected'
const refused = 'Job shop/old: could not delete: jobs.batch "old" is forbidden (403)'

test.each([
  ['no error → 0', [], [], EXIT.done],
  ['a migration failed (a Job error) → 1', [failed], [failed], EXIT.jobFailed],
  ['the cluster refused → 3', [refused], [], EXIT.errored],
  ['both: the run did not finish its work → 3', [failed, refused], [failed], EXIT.errored],
  ['an error the result does not say is a Job’s (older results) → 3', [failed], undefined, EXIT.errored]
])('%s', (_, errors, jobErrors, code) => {
  expect(exitCodeOf({ errors, jobErrors })).toBe(code)
})

test('the codes are the documented ones, apart', () => {
  expect(EXIT).toEqual({ done: 0, jobFailed: 1, usage: 2, errored: 3 })
})
