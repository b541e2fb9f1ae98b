// The names of the action's inputs (the CLI's flags) and the error a bad one raises. Kept apart
// from the parser so that the small validators beside it can name inputs without an import cycle.

/** Input names: part of the public interface (action.yml declares each; the README's table is written from it). */
export const INPUT = {
  phase: 'phase',
  kubeconfig: 'kubeconfig',
  context: 'context',
  namespace: 'namespace',
  allNamespaces: 'all-namespaces',
  release: 'release',
  manifest: 'manifest',
  chart: 'chart',
  helmArgs: 'helm-args',
  selector: 'selector',
  jobs: 'jobs',
  includeHooks: 'include-hooks',
  onRunning: 'on-running',
  waitTimeout: 'wait-timeout',
  stuckAfter: 'stuck-after',
  harvestLogs: 'harvest-logs',
  onLogFailure: 'on-log-failure',
  maxLogBytes: 'max-log-bytes',
  maskLogTails: 'mask-log-tails',
  streamLogs: 'stream-logs',
  logsDir: 'logs-dir',
  s3Endpoint: 's3-endpoint',
  uploadLogs: 'upload-logs',
  dryRun: 'dry-run',
  ttl: 'ttl',
  failureGrace: 'failure-grace',
  waitForJobs: 'wait-for-jobs',
  failOnJobFailure: 'fail-on-job-failure',
  keeperNamespace: 'keeper-namespace',
  leaseName: 'lease-name',
  concurrency: 'concurrency',
  keepLast: 'keep-last',
  groupBy: 'group-by',
  preflight: 'preflight',
  recreateStatefulSets: 'recreate-statefulsets'
} as const

/** Inputs of the action alone: the CLI runs outside GitHub Actions, which has no workflow artifacts for it. */
export const ACTION_ONLY: readonly string[] = [INPUT.uploadLogs]

/** A bad input: the message names the input, the value and what was expected. */
export class SettingsError extends Error {
  override name = 'SettingsError'
}
