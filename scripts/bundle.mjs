// npm run bundle: the engines of the action (dist/action.js, and dist/artifact.js beside it for
// upload-logs) and of the CLI (dist/cli/index.js), each one ES module with its dependencies plus
// licenses.txt naming every bundled package with its
// license text; and their launchers (dist/index.js, dist/cli/job-sweeper.mjs), which run an
// engine in a worker thread (src/launch/engine-thread.ts).
//
// esbuild rather than ncc: it leaves out what the engine never reaches (the CLI is 1.0 MB, where
// ncc made 5.1 MB of client-node's every generated API and model), and a CLI run starts at 71 MB
// of resident memory (83 MB with its worker thread) instead of 131 MB. esbuild has no license
// collector like ncc's, hence the few lines below that read each bundled package's license file.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { join } from 'node:path'
import { build } from 'esbuild'

const top = join(import.meta.dirname, '..')

// Bundled CommonJS dependencies call require() for Node's built-ins; an ES module has none.
const banner = "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"

// Node's built-ins are loaded with require(), not import: an ES import of node:http reads every
// export of the module, WebSocket and MessageEvent among them, and those lazy getters load Node's
// own copy of undici (13 MB of resident memory) that nothing here uses; require() leaves them unread.
const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]))
const builtinsByRequire = {
  name: 'builtins-by-require',
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) => {
      if (!builtins.has(args.path)) return undefined
      if (args.kind !== 'import-statement' && args.kind !== 'dynamic-import') return { path: args.path, external: true }
      return { path: args.path, namespace: 'builtin-by-require' }
    })
    b.onLoad({ filter: /.*/, namespace: 'builtin-by-require' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)})`,
      loader: 'js'
    }))
  }
}

// client-node's index loads every module of the package, each generated API and model among them;
// none of them does anything on loading but define what it exports, so what the engine does not
// use (it uses KubeConfig, Watch and Log: src/kube/rest.ts) is left out of the bundle.
const clientNodeWithoutSideEffects = {
  name: 'client-node-without-side-effects',
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === 'resolved' || !/@kubernetes\/client-node/.test(`${args.importer} ${args.path}`)) return undefined
      const resolved = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: 'resolved' })
      if (resolved.errors.length > 0 || !/@kubernetes\/client-node\/dist\//.test(resolved.path)) return undefined
      return { ...resolved, sideEffects: false }
    })
  }
}

const options = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  legalComments: 'none',
  banner: { js: banner },
  plugins: [builtinsByRequire, clientNodeWithoutSideEffects],
  // The CLI's --version: the package's own, fixed at build time.
  define: { 'process.env.JOB_SWEEPER_VERSION': JSON.stringify(JSON.parse(readFileSync(join(top, 'package.json'), 'utf8')).version) },
  logLevel: 'warning'
}

/** The package directory (under node_modules) of a bundled input path, if it is one. */
function packageDir(input) {
  const parts = input.split('/')
  const at = parts.lastIndexOf('node_modules')
  if (at === -1) return undefined
  const name = parts[at + 1].startsWith('@') ? parts.slice(at + 1, at + 3) : parts.slice(at + 1, at + 2)
  return join(top, ...parts.slice(0, at + 1), ...name)
}

function licenses(inputs) {
  const dirs = [...new Set(Object.keys(inputs).map(packageDir).filter(Boolean))].sort()
  return dirs
    .map((dir) => {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
      const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f))
      const text = file ? readFileSync(join(dir, file), 'utf8').trim() : `(no license file; package.json says ${pkg.license ?? 'nothing'})`
      return `${pkg.name}\n${pkg.license ?? ''}\n${text}`
    })
    .join('\n\n')
}

// upload-logs' client (@actions/artifact, with an Azure blob client and a zip writer: 1.5 MB) is a
// module of its own beside the action's engine, dist/artifact.js, which the engine imports only when
// upload-logs is on: inside the engine's file, every run would parse it (19 MB more resident memory
// at every start, measured).
const ARTIFACT = '@actions/artifact'
const artifactApart = {
  name: 'artifact-apart',
  setup(b) {
    b.onResolve({ filter: /^@actions\/artifact$/ }, (args) => (args.kind === 'dynamic-import' ? { path: './artifact.js', external: true } : undefined))
  }
}

// The engines, each with its dependencies and their licenses: the action's (and upload-logs'
// client beside it) and the CLI's.
for (const [entry, outfile, apart] of [
  ['src/index.ts', 'dist/action.js', true],
  ['src/cli.ts', 'dist/cli/index.js', false]
]) {
  const out = join(top, outfile, '..')
  mkdirSync(out, { recursive: true })
  const result = await build({
    ...options,
    plugins: apart ? [...options.plugins, artifactApart] : options.plugins,
    entryPoints: [join(top, entry)],
    outfile: join(top, outfile),
    metafile: true
  })
  const inputs = { ...result.metafile.inputs }
  if (apart) {
    const client = await build({
      ...options,
      stdin: { contents: `export * from '${ARTIFACT}'`, resolveDir: top, loader: 'js' },
      outfile: join(out, 'artifact.js'),
      metafile: true
    })
    Object.assign(inputs, client.metafile.inputs)
  }
  writeFileSync(join(out, 'licenses.txt'), `${licenses(inputs)}\n`)
  writeFileSync(join(out, 'package.json'), '{\n  "type": "module"\n}\n')
}
// The launchers, which run an engine in a worker thread (src/launch/engine-thread.ts): the
// action's entry (action.yml: dist/index.js) and the CLI's (package.json bin).
for (const [entry, outfile] of [
  ['src/launch/action.ts', 'dist/index.js'],
  ['src/launch/cli.ts', 'dist/cli/job-sweeper.mjs'],
  // The helm sweep plugin's entry (plugin.yaml, scripts/helm-sweep.sh): it runs helm and the CLI
  // beside it as child processes, and loads no engine itself. Apart from dist/cli, which the image
  // holds whole (scripts/image.sh): the plugin runs beside helm, never in the image.
  ['src/cli/helm-sweep.ts', 'dist/plugin/helm-sweep.mjs']
]) {
  await build({ ...options, entryPoints: [join(top, entry)], outfile: join(top, outfile) })
}
