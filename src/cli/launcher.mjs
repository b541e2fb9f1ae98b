#!/usr/bin/env node
// The job-sweeper command (package.json bin). The bundled engine (client-node, undici) needs
// Node.js 22.19 or newer and fails obscurely while loading on older ones, so this plain file,
// copied next to the bundle by `npm run bundle`, checks the version before loading it.
const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(`job-sweeper needs Node.js 22.19 or newer; this is ${process.version}\n`)
  process.exit(1)
}
await import('./index.js')
