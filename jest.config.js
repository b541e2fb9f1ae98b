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
  maxWorkers: 1
}
