// Label selectors are checked before the cluster is read, with the API server's grammar
// (apimachinery's labels.Parse): what it accepts passes, what it refuses is refused here.
import { selectorProblem } from '../../src/settings/selector.ts'

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
