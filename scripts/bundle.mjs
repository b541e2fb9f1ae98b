// npm run bundle: the action (dist/index.js) and the CLI (dist/cli/index.js), each one ES module
// with its dependencies, plus licenses.txt naming every bundled package with its license text.
//
// esbuild rather than ncc: client-node's index pulls in every generated API and model; esbuild
// drops what the engine never reaches (5.1 MB → 2.0 MB), and a CLI run starts at about 87 MB of
// resident memory instead of 131 MB. esbuild has no license collector like ncc's, hence the few
// lines below that read each bundled package's license file.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { build } from 'esbuild'

const top = join(import.meta.dirname, '..')

// Bundled CommonJS dependencies call require() for Node's built-ins; an ES module has none.
const banner = "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"

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

for (const [entry, outDir] of [
  ['src/index.ts', 'dist'],
  ['src/cli.ts', 'dist/cli']
]) {
  const out = join(top, outDir)
  mkdirSync(out, { recursive: true })
  const result = await build({
    entryPoints: [join(top, entry)],
    outfile: join(out, 'index.js'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    legalComments: 'none',
    banner: { js: banner },
    metafile: true,
    logLevel: 'warning'
  })
  writeFileSync(join(out, 'licenses.txt'), `${licenses(result.metafile.inputs)}\n`)
  writeFileSync(join(out, 'package.json'), '{\n  "type": "module"\n}\n')
}
copyFileSync(join(top, 'src', 'cli', 'launcher.mjs'), join(top, 'dist', 'cli', 'job-sweeper.mjs'))
