// The Lease's name, its holder and its expiry: pure rules, no cluster.
import { isExpired, LEASE_DURATION_SECONDS, leaseName, runIdentity, scopeKey } from '../../src/kube/lease.ts'

describe('leaseName', () => {
  test.each([
    ['release only', { release: 'app' }, /^job-sweeper-app-[0-9a-f]{16}$/],
    ['selector only', { selector: 'app=web' }, /^job-sweeper-[0-9a-f]{16}$/],
    ['a 53-character release is cut, and the name stays a DNS label', { release: `${'a'.repeat(29)}-${'b'.repeat(23)}` }, /^job-sweeper-a{29}-[0-9a-f]{16}$/],
    ['a release with dots', { release: 'my.app' }, /^job-sweeper-my\.app-[0-9a-f]{16}$/]
  ])('%s', (_, scope, expected) => {
    const name = leaseName(scope)
    expect(name).toMatch(expected)
    expect(name.length).toBeLessThanOrEqual(63)
  })

  test('the same scope gives the same name in every run and phase; another scope another name', () => {
    expect(leaseName({ release: 'app', jobs: ['b', 'a'] })).toBe(leaseName({ release: 'app', jobs: ['a', 'b'] }))
    expect(leaseName({ release: 'app' })).not.toBe(leaseName({ release: 'app', selector: 'tier=db' }))
    expect(leaseName({ release: 'app' })).not.toBe(leaseName({ release: 'api' }))
    // A manifest is known by the Jobs it renders, not by the path of this run's rendered file.
    expect(leaseName({ manifest: '/tmp/a/rendered.yaml' }, ['app-migrate'])).toBe(leaseName({ manifest: '/tmp/b/out.yaml' }, ['app-migrate']))
    expect(scopeKey({ release: 'app', selector: 'x=y' })).toBe('release=app; selector=x=y')
  })
})

test('runIdentity: the workflow run URL (a working link) and the process, else the host and process', () => {
  const env = { GITHUB_SERVER_URL: 'https://github.example', GITHUB_REPOSITORY: 'acme/shop', GITHUB_RUN_ID: '7' }
  expect(runIdentity(env)).toMatch(new RegExp(`^https://github\\.example/acme/shop/actions/runs/7#.+-${process.pid}$`))
  expect(runIdentity({}, 'https://x.example/o/r/actions/runs/1')).toMatch(/^https:\/\/x\.example\/o\/r\/actions\/runs\/1#/)
  expect(runIdentity({})).toMatch(new RegExp(`^.+-${process.pid}$`))
})

describe('isExpired', () => {
  const now = new Date('2026-01-01T12:00:00Z')
  const lease = (renewedSecondsAgo: number | undefined, duration = LEASE_DURATION_SECONDS) => ({
    spec: {
      holderIdentity: 'other',
      leaseDurationSeconds: duration,
      renewTime: renewedSecondsAgo === undefined ? undefined : new Date(now.getTime() - renewedSecondsAgo * 1000)
    }
  })
  test.each([
    ['renewed 5s ago, duration 30s → held', lease(5), false],
    ['renewed 30s ago, duration 30s → held (not yet past)', lease(30), false],
    ['renewed 31s ago, duration 30s → expired', lease(31), true],
    ['renewed 5 min ago, duration 1h → held', lease(300, 3600), false],
    ['never renewed → expired', lease(undefined), true]
  ])('%s', (_, l, expired) => {
    expect(isExpired(l, now)).toBe(expired)
  })
})
