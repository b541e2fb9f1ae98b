// Label selectors are checked before the cluster is read, with the API server's grammar
// (apimachinery's labels.Parse): what it accepts passes, what it refuses is refused here.
import { matchesSelector, parseSelector, selectorProblem } from '../../src/settings/selector.ts'

test.each([
  'app=web',
  'app==web',
  'app!=web',
  'app',
  '!canary',
  'app.kubernetes.io/component=migrate',
  'tier in (db,cache)',
  'tier notin (db, cache)',
  'tier in (db,)', // an empty item is the empty value
  'app=', // the empty value
  'env in (in,notin)', // keywords are values in a list
  'replicas>3',
  'replicas < 10',
  ' app = web , !canary , tier in ( a ) ',
  'Example.COM_app=Value_1',
  `k=${'v'.repeat(63)}`,
  `${'p'.repeat(253 - 4)}.com/${'n'.repeat(63)}=x`
])('%j is a label selector', (selector) => {
  expect(selectorProblem(selector)).toBeUndefined()
})

test.each([
  ['app in (a,b', "found the end where ',' or ')' belongs in the list of 'app in'"],
  ['app in ()', "the list of 'app in' is empty"],
  ['app in a', "'in' takes a list in parentheses, like app in (a,b)"],
  ['app notin', "'notin' takes a list in parentheses"],
  ['app=web,', 'found the end where a label key belongs'],
  [',app=web', "found ',' where a label key belongs"],
  ['app=web,,tier=db', "found ',' where a label key belongs"],
  ['!app=web', "found '=' where ',' or the end belongs"],
  ['app=a=b', "found '=' where ',' or the end belongs"],
  ['app web', "found 'web' after 'app' where =, ==, !=, in, notin, > or < belongs"],
  ['-app=web', "label key '-app' must be at most 63 letters"],
  ['app_=web', "label key 'app_' must be"],
  [`${'k'.repeat(64)}=v`, 'must be at most 63 letters'],
  ['a/b/c=v', "label key 'a/b/c' has more than one '/'"],
  ['Example.com/app=v', "the prefix of label key 'Example.com/app' must be a DNS subdomain"],
  ['/app=v', 'the prefix of label key'],
  [`app=${'v'.repeat(64)}`, 'label value'],
  ['app=-web', "label value '-web' must be"],
  ['app in (a,b c)', "found 'c' where ',' or ')' belongs"],
  ['replicas>three', "'replicas >' takes an integer"],
  ['in=web', "found 'in' where a label key belongs"],
  ['app=(web)', "found '(' where the value of 'app' belongs"]
])('%j is refused: %s', (selector, problem) => {
  expect(selectorProblem(selector)).toContain(problem)
})

// The fresh copy of a Job read before a delete is matched with labels.Requirement.Matches' rules.
const labels = { app: 'web', tier: 'db', replicas: '5', 'example.com/canary': '' }
test.each<[string, boolean]>([
  ['app=web', true],
  ['app==web', true],
  ['app=api', false],
  ['app!=api', true],
  ['app!=web', false],
  ['missing!=x', true], // != and notin hold for a label that is absent
  ['tier in (db,cache)', true],
  ['tier in (cache)', false],
  ['missing in (x)', false],
  ['tier notin (cache)', true],
  ['tier notin (db)', false],
  ['missing notin (x)', true],
  ['app', true],
  ['missing', false],
  ['!missing', true],
  ['!app', false],
  ['example.com/canary', true], // present with the empty value
  ['example.com/canary=', true],
  ['app=', false],
  ['replicas>3', true],
  ['replicas>5', false],
  ['replicas<10', true],
  ['app>3', false], // a value that is not an integer matches neither > nor <
  ['missing<3', false],
  ['app=web,tier=db', true],
  ['app=web,tier=cache', false], // every requirement must hold
  [' app = web , !missing , tier in ( db ) ', true]
])('%j on {app: web, tier: db, replicas: 5, example.com/canary: ""} → %s', (selector, matches) => {
  expect(matchesSelector(selector, labels)).toBe(matches)
})

test('a Job without labels matches only what absent labels satisfy; a selector that does not parse matches nothing', () => {
  expect(matchesSelector('!app', undefined)).toBe(true)
  expect(matchesSelector('app!=web', undefined)).toBe(true)
  expect(matchesSelector('app', undefined)).toBe(false)
  expect(matchesSelector('app in (a', { app: 'a' })).toBe(false)
})

test('one parser: the requirements parsed are the ones matched, == and = alike', () => {
  expect(parseSelector('a==1,b!=2,c in (x,y),!d,e,f>3')).toEqual({
    requirements: [
      { key: 'a', operator: '=', values: ['1'] },
      { key: 'b', operator: '!=', values: ['2'] },
      { key: 'c', operator: 'in', values: ['x', 'y'] },
      { key: 'd', operator: '!', values: [] },
      { key: 'e', operator: 'exists', values: [] },
      { key: 'f', operator: '>', values: ['3'] }
    ]
  })
  expect(parseSelector('app in (a').problem).toContain("found the end where ',' or ')' belongs")
})
