// job-sweeper keeper's flags (src/settings/keeper.ts): defaults, and bad input named with what was expected.
import { KEEPER_DEFAULT_SELECTOR, parseKeeperSettings, type KeeperFlags } from '../../src/settings/keeper.ts'

const env = { HOME: '/home/u' }
const base: KeeperFlags = { namespace: 'prod,jobs', 'logs-dir': 's3://logs/keeper' }

test('defaults: the Jobs post manages, a 1h hold, 10Mi a log, 4 at once, :8080', () => {
  const s = parseKeeperSettings(base, env)
  expect(s).toMatchObject({
    namespaces: ['prod', 'jobs'],
    selector: KEEPER_DEFAULT_SELECTOR,
    logsTarget: { kind: 's3', bucket: 'logs', prefix: 'keeper' },
    holdDeadlineSeconds: 3600,
    maxLogBytes: 10 * 1024 * 1024,
    concurrency: 4,
    shutdownGraceSeconds: 20,
    listen: { host: '0.0.0.0', port: 8080 },
    letGo: false
  })
  expect(parseKeeperSettings({ ...base, 'let-go': true }, env).letGo).toBe(true)
  expect(parseKeeperSettings({ ...base, 'shutdown-grace': '45' }, env).shutdownGraceSeconds).toBe(45)
  expect(parseKeeperSettings({ ...base, 'shutdown-grace': '0s' }, env).shutdownGraceSeconds).toBe(0)
})

test('--all-namespaces: one watch of every namespace, instead of --namespace (not with it)', () => {
  expect(parseKeeperSettings({ 'logs-dir': '/logs', 'all-namespaces': true }, env)).toMatchObject({ namespaces: [], allNamespaces: true })
  expect(parseKeeperSettings(base, env).allNamespaces).toBe(false)
  expect(() => parseKeeperSettings({ ...base, 'all-namespaces': true }, env)).toThrow(
    "Invalid --all-namespaces with --namespace 'prod,jobs': expected one of them, not both"
  )
})

test.each<[string, KeeperFlags, string]>([
  ['no namespace', { 'logs-dir': '/logs' }, 'Missing --namespace'],
  [
    'a namespace that is no name',
    { ...base, namespace: 'prod,Bad_Name' },
    "Invalid --namespace 'prod,Bad_Name': expected namespace names, comma separated ('Bad_Name' is not one)"
  ],
  ['no logs-dir', { namespace: 'prod' }, 'Missing --logs-dir'],
  ['a bad selector', { ...base, selector: 'a in (' }, "Invalid --selector 'a in ('"],
  ['a bad hold-deadline', { ...base, 'hold-deadline': 'soon' }, "Invalid --hold-deadline 'soon': expected a duration"],
  ['a bad concurrency', { ...base, concurrency: '0' }, "Invalid --concurrency '0': expected a whole number from 1 to 64"],
  ['a bad listen', { ...base, listen: '8080' }, "Invalid --listen '8080': expected host:port"],
  ['a bad shutdown-grace', { ...base, 'shutdown-grace': 'later' }, "Invalid --shutdown-grace 'later': expected a duration of at most 1h"],
  ['a shutdown-grace past 1h', { ...base, 'shutdown-grace': '2h' }, "Invalid --shutdown-grace '2h': expected a duration of at most 1h"],
  ['a tiny max-log-bytes', { ...base, 'max-log-bytes': '10' }, "Invalid --max-log-bytes '10'"]
])('%s: refused, naming the flag', (_name, flags, message) => {
  expect(() => parseKeeperSettings(flags, env)).toThrow(message)
})
