// Every credential a kubeconfig holds is found and masked, and one masker hides them in text.
import { KubeConfig } from '@kubernetes/client-node'
import { kubeconfigSecrets } from '../../src/kube/kubeconfig.ts'
import type { RunResult } from '../../src/execute/outcome.ts'
import { redactResult } from '../../src/report/redact-result.ts'
import { secretMasker, SecretMasker } from '../../src/text/secrets.ts'

const pem = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC-KEY-LINE-1\nBKcwggSjAgEAAoIBAQC7-KEY-LINE-2\n-----END PRIVATE KEY-----\n'
const keyData = Buffer.from(pem).toString('base64')

const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
contexts: [{name: a, context: {cluster: c, user: token}}]
current-context: a
users:
- {name: token, user: {token: tok-SECRET-1}}
- {name: basic, user: {username: admin, password: pw-SECRET-2}}
- {name: cert, user: {client-key-data: ${keyData}, client-certificate-data: ${Buffer.from('cert-SECRET-3').toString('base64')}}}
- name: exec
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: /usr/local/bin/get-token
      args: [--cluster=prod-SECRET-4, --verbose, arg-SECRET-5]
      env: [{name: API_KEY, value: env-SECRET-6}, {name: DEBUG, value: '1'}, {name: OUTPUT, value: json}]
- name: oidc
  user:
    auth-provider:
      name: oidc
      config:
        client-id: my-client
        idp-issuer-url: https://issuer.example
        client-secret: cs-SECRET-7
        refresh-token: rt-SECRET-8
        id-token: id-SECRET-9
        access-token: at-SECRET-10
`

test('every credential of every user is found: tokens, passwords, keys, certs, exec args and env, auth-provider secrets', () => {
  const kc = new KubeConfig()
  kc.loadFromString(kubeconfig)
  const secrets = kubeconfigSecrets(kc)
  for (const n of [1, 2, 4, 5, 6, 7, 8, 9, 10]) expect(secrets.some((s) => s.includes(`SECRET-${n}`))).toBe(true)
  // Keys and certs as given (base64) and as the PEM they decode to, line by line.
  expect(secrets).toEqual(expect.arrayContaining([keyData, pem, 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC-KEY-LINE-1', 'BKcwggSjAgEAAoIBAQC7-KEY-LINE-2']))
  expect(secrets).toContain(Buffer.from('cert-SECRET-3').toString('base64'))
  // What is not secret stays readable.
  expect(secrets).not.toEqual(expect.arrayContaining(['--verbose']))
  // Short exec env values are switches: masking '1' would hide every 1 in the log.
  for (const value of ['1', 'json']) expect(secrets).not.toContain(value)
  for (const plain of ['admin', 'my-client', 'https://issuer.example', '/usr/local/bin/get-token', 'API_KEY', '-----BEGIN PRIVATE KEY-----'])
    expect(secrets).not.toContain(plain)
})

test('the masker replaces every registered secret, longest first, and nothing else', () => {
  const masker = new SecretMasker()
  masker.add('abc-SECRET')
  masker.add('abc-SECRET-longer')
  masker.add('  ')
  masker.add('tok\n')
  expect(masker.redact('x abc-SECRET-longer y abc-SECRET z tok, abc')).toBe('x *** y *** z ***, abc')
  expect(masker.redact('nothing to hide')).toBe('nothing to hide')
})

test('a run result is redacted where job-sweeper wrote the words: errors, warnings and reasons, not log tails', () => {
  secretMasker.add('tok-RESULT-SECRET')
  const result: RunResult = {
    phase: 'pre',
    namespace: 'prod',
    dryRun: false,
    errors: ['Job prod/a: Unauthorized (token tok-RESULT-SECRET)'],
    warnings: ['could not record an Event: tok-RESULT-SECRET'],
    outcomes: [
      {
        namespace: 'prod',
        name: 'a',
        status: 'failed',
        ageSeconds: 1,
        action: 'delete',
        result: 'error',
        waited: false,
        reason: 'failed: tok-RESULT-SECRET',
        logs: { files: [], failures: [], tails: [{ file: 'a.log', lines: ['tok-RESULT-SECRET'] }] }
      }
    ]
  }
  const redacted = redactResult(result)
  expect([redacted.errors, redacted.warnings, redacted.outcomes[0].reason]).toEqual([
    ['Job prod/a: Unauthorized (token ***)'],
    ['could not record an Event: ***'],
    'failed: ***'
  ])
  // Tails were masked (or not) by mask-log-tails when they were read.
  expect(redacted.outcomes[0].logs?.tails?.[0].lines).toEqual(['tok-RESULT-SECRET'])
})
