/** Jest runs under Node 24 with --experimental-vm-modules (see scripts/node24 and npm test). */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: { rewriteRelativeImportExtensions: false, allowImportingTsExtensions: true } }]
  },
  globalSetup: '<rootDir>/test/cluster/global-setup.ts',
  globalTeardown: '<rootDir>/test/cluster/global-teardown.ts',
  testTimeout: 180000,
  // Scenario tests share one control plane; running them one at a time keeps 2-core machines
  // responsive and the controllers' timing realistic.
  maxWorkers: 1,
  // Twice in five full runs, once every test had passed and the cluster was stopped, jest did not
  // exit: its main thread spun. Seen again in one of nine runs of parts of the suite (apiserver-down,
  // -restart, watch-failures, job-api, in-cluster, post, log-tails, summary-browser): after the
  // teardown one TCP socket was still open, its Socket reporting no addresses, the main thread kept
  // running, and jest had not exited 60 s later. Other runs of the same suites (apiserver-restart
  // alone, apiserver-down with watch-failures) and of every other suite, unit tests included, ended
  // by themselves. Until its owner is found (global-teardown.ts names what is left open), the run
  // ends when the results are in rather than hanging CI.
  forceExit: true
}
