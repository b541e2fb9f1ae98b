/** Jest runs under Node 24 with --experimental-vm-modules (see scripts/node24 and npm test). */
export default {
  // Node's environment plus a turn on the shared control plane (see the file).
  testEnvironment: '<rootDir>/test/cluster/suite-environment.ts',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: { rewriteRelativeImportExtensions: false, allowImportingTsExtensions: true } }]
  },
  globalSetup: '<rootDir>/test/cluster/global-setup.ts',
  globalTeardown: '<rootDir>/test/cluster/global-teardown.ts',
  testTimeout: 180000,
  // Scenario suites share one control plane, two at a time, each in namespaces of its own; the few
  // marked `@cluster whole` run alone (test/cluster/suite-environment.ts). Most of a suite's time is
  // waiting on controllers and timeouts, so two overlap well on 2 cores.
  maxWorkers: 2,
  testSequencer: '<rootDir>/test/cluster/suite-sequencer.ts',
  // In a few full runs jest did not exit after every test had passed and the cluster had stopped:
  // its main thread spun with one TCP socket open (seen with apiserver-down/-restart, watch-failures,
  // job-api, in-cluster, post, log-tails, summary-browser in one run). Until its owner is found
  // (global-teardown.ts names what is left open), the run ends when the results are in.
  forceExit: true
}
