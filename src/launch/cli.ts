#!/usr/bin/env node
// The job-sweeper command (package.json bin: dist/cli/job-sweeper.mjs). The engine (client-node,
// undici; dist/cli/index.js, built from src/cli.ts) needs Node.js 22.19 or newer and fails
// obscurely while loading on older ones, so this small file checks the version before running it
// in a worker thread (see engine-thread.ts).
import { runEngine } from './engine-thread.ts'

const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(`job-sweeper needs Node.js 22.19 or newer; this is ${process.version}\n`)
  process.exitCode = 1
} else runEngine(new URL('./index.js', import.meta.url))
