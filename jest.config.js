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
  testSequencer: '<rootDir>/test/cluster/suite-sequencer.ts'
}
