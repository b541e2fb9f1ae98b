// The keeper's settings for the unit tier: one namespace, a directory store, the defaults the CLI
// gives; each test overrides what it is about.
import { KEEPER_DEFAULT_SELECTOR, type KeeperSettings } from '../../src/settings/keeper.ts'

export const keeperSettings = (overrides: Partial<KeeperSettings> = {}): KeeperSettings => ({
  namespaces: ['prod'],
  allNamespaces: false,
  selector: KEEPER_DEFAULT_SELECTOR,
  logsTarget: { kind: 'dir', dir: '/archive' },
  holdDeadlineSeconds: 3600,
  maxLogBytes: 1_000_000,
  concurrency: 2,
  shutdownGraceSeconds: 20,
  leaseNamespace: 'prod',
  listen: { host: '127.0.0.1', port: 0 },
  letGo: false,
  ...overrides
})
