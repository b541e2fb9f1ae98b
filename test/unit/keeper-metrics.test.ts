// The keeper's failure counter's reasons (report/keeper-metrics.ts): a line of what could not be
// saved, as logs.ts and job-file.ts word it, goes to store (the store refused or did not answer a
// write, whatever was written), read (the API server did not serve a log) or api.
import { failureReason } from '../../src/report/keeper-metrics.ts'

test.each([
  [
    'a log the bucket refused',
    "cannot save the log of app-migrate-x1/main: logs-dir 's3://logs/k': cannot upload k/prod/j/x1/main.log to bucket 'logs': 503 ServiceUnavailable (after 3 attempts)",
    'store'
  ],
  ['a log the directory could not take', 'cannot save the log of app-migrate-x1/main: cannot write /logs/prod/j/x1/main.log (ENOSPC)', 'store'],
  [
    'a note the bucket refused',
    "cannot note that app-migrate-x1/main never ran: logs-dir 's3://logs/k': cannot upload k/prod/j/x1/main.never-ran.txt to bucket 'logs': 403 AccessDenied",
    'store'
  ],
  ['job.json', "cannot save job.json: logs-dir 's3://logs/k': cannot upload k/prod/j/job.json to bucket 'logs': connect ECONNREFUSED", 'store'],
  [
    'a followed log the bucket refused',
    "cannot follow the log of app-migrate-x1/main to its end: logs-dir 's3://logs/k': cannot upload k/prod/j/x1/main.log to bucket 'logs': 503 SlowDown",
    'store'
  ],
  ['a log the API server did not serve', 'cannot save the log of app-migrate-x1/main: 500 the kubelet did not answer', 'read'],
  ['a follow the API server refused', 'cannot follow the log of app-migrate-x1/main to its end: 404 pods "app-migrate-x1" not found', 'read'],
  ['the pods not listed', 'cannot list its pods: pods is forbidden', 'api']
])('%s → %s', (_what, line, reason) => {
  expect(failureReason(line)).toBe(reason)
})
