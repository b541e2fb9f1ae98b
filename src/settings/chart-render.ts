// The chart input: where manifest is not given and chart is, the release is rendered as the
// upgrade renders it — `helm upgrade RELEASE CHART <helm-args> --dry-run=server`, with the helm on
// PATH: lookup, .Release.IsInstall and .Capabilities as the upgrade sees them — into a file that
// stands for manifest. Read before the settings are parsed, so that everything after sees a
// manifest as if it had been given.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { INPUT, SettingsError } from './inputs.ts'
import { decodeKubeconfig, expandHome, isKubeconfigPath } from './kubeconfig-input.ts'

type ReadInput = (name: string) => string

/**
 * helm-args as words, as a shell splits them without expanding anything: spaces and newlines
 * separate, '…' and "…" group (`--set 'a=b c'` is two words). Throws on an unclosed quote.
 */
export function helmWords(text: string): string[] {
  const words: string[] = []
  let word: string | undefined
  let quote: string | undefined
  for (const c of text) {
    if (quote !== undefined) {
      if (c === quote) quote = undefined
      else word += c
    } else if (c === "'" || c === '"') {
      quote = c
      word ??= ''
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word)
      word = undefined
    } else word = (word ?? '') + c
  }
  if (quote !== undefined) throw new SettingsError(`Invalid ${INPUT.helmArgs} '${text}': expected each ${quote} closed`)
  if (word !== undefined) words.push(word)
  return words
}

/** The helm upgrade arguments of the render: the user's, where the release is, then the dry run. */
export function renderArgs(release: string, chart: string, helmArgs: string[], where: { namespace?: string; context?: string; kubeconfig?: string }): string[] {
  return [
    'upgrade',
    release,
    chart,
    ...helmArgs,
    ...(where.namespace ? ['--namespace', where.namespace] : []),
    ...(where.context ? ['--kube-context', where.context] : []),
    ...(where.kubeconfig ? ['--kubeconfig', where.kubeconfig] : []),
    // Last: a --dry-run or --output among helm-args gives way (pflag takes the last).
    '--dry-run=server',
    '--output',
    'table'
  ]
}

function runHelm(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string; missing: boolean }> {
  return new Promise((resolve) => {
    const child = spawn('helm', args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    child.on('error', (e: NodeJS.ErrnoException) => resolve({ code: -1, stdout, stderr: e.message, missing: e.code === 'ENOENT' }))
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr, missing: false }))
  })
}

/**
 * `parse` of the inputs, with manifest standing for the chart's rendering when chart is given (of
 * the same inputs when it is not). The rendered file holds the chart's Secrets: readable by this
 * user only, and removed once `parse` has read it (the settings keep its path, no more). `log`
 * says what runs.
 */
export async function parseWithChart<T>(
  read: ReadInput,
  parse: (read: ReadInput) => T,
  log: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env
): Promise<T> {
  const chart = read(INPUT.chart).trim()
  const helmArgs = read(INPUT.helmArgs).trim()
  if (chart === '') {
    if (helmArgs !== '')
      throw new SettingsError(`Invalid ${INPUT.helmArgs} '${helmArgs}' without ${INPUT.chart}: expected ${INPUT.chart}, the chart they render`)
    return parse(read)
  }
  if (read(INPUT.manifest).trim() !== '')
    throw new SettingsError(`Invalid ${INPUT.chart} '${chart}' with ${INPUT.manifest}: expected one of them, the rendered release or the chart to render`)
  const release = read(INPUT.release).trim()
  if (release === '')
    throw new SettingsError(`Invalid ${INPUT.chart} '${chart}' without ${INPUT.release}: expected ${INPUT.release}, as helm upgrade RELEASE CHART renders it`)
  const namespace = read(INPUT.namespace).trim() || undefined
  const context = read(INPUT.context).trim() || undefined
  // Named by what is rendered, not at random: the manifest's path is part of a scope's identity
  // (the action's post step finds the explicit post phase of the same scope by it).
  const key = createHash('sha256')
    .update(JSON.stringify([release, chart, helmArgs, namespace ?? '', context ?? '']))
    .digest('hex')
    .slice(0, 16)
  const dir = join(tmpdir(), `job-sweeper-render-${key}`)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  try {
    return parse(await renderTo(dir, read, { release, chart, helmArgs, namespace, context }, log, env))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function renderTo(
  dir: string,
  read: ReadInput,
  { release, chart, helmArgs, namespace, context }: { release: string; chart: string; helmArgs: string; namespace?: string; context?: string },
  log: (line: string) => void,
  env: NodeJS.ProcessEnv
): Promise<ReadInput> {
  // helm reads a kubeconfig file: the input's content (YAML or base64) is written to one.
  const kubeconfigInput = read(INPUT.kubeconfig).trim()
  let kubeconfig: string | undefined
  if (kubeconfigInput !== '') {
    kubeconfig = isKubeconfigPath(kubeconfigInput, existsSync) ? expandHome(kubeconfigInput, env) : join(dir, 'kubeconfig')
    if (kubeconfig === join(dir, 'kubeconfig')) writeFileSync(kubeconfig, decodeKubeconfig(kubeconfigInput), { mode: 0o600 })
  }
  const args = renderArgs(release, chart, helmWords(helmArgs), { namespace, context, kubeconfig })
  log(`Rendering ${INPUT.chart} '${chart}' as the upgrade will: helm upgrade ${release} ${chart} … --dry-run=server`)
  const rendered = await runHelm(args, env)
  if (rendered.missing)
    throw new SettingsError(
      `Invalid ${INPUT.chart} '${chart}': rendering it needs helm on PATH (helm upgrade --dry-run=server), and there is none; install helm before this step (GitHub's hosted runners have it), or render the release yourself and give ${INPUT.manifest}`
    )
  if (rendered.code !== 0)
    throw new SettingsError(
      `Invalid ${INPUT.chart} '${chart}': helm upgrade --dry-run=server failed (exit code ${rendered.code}), so nothing was done: ${rendered.stderr.trim().slice(-2000)}`
    )
  const manifest = join(dir, 'rendered.yaml')
  writeFileSync(manifest, rendered.stdout, { mode: 0o600 })
  return (name) => (name === INPUT.manifest ? manifest : read(name))
}
