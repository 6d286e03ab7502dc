#!/usr/bin/env node
// `npm run sea -- --target NAME` (or `--all`): builds dist/NAME/tea.cjs and then dist/NAME/tea, the single
// executable for that board (scripts/build/sea-build.mjs). Fetches the target's Node and lmdb prebuild on first use
// (scripts/fetch-runtimes.mjs). `--force` rebuilds even when nothing changed.
import { join, resolve, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildTarget } from '../build.mjs'
import { buildSea } from './build/sea-build.mjs'
import { listTargets, loadTarget } from './build/targets.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')

export async function seaTarget(name, { force = false, quiet = false } = {}) {
  const log = quiet ? () => {} : (m) => console.error(m)
  const target = loadTarget(root, name)
  const { outfile } = await buildTarget(name, { quiet })
  return buildSea({
    root,
    target,
    bundleFile: outfile,
    force,
    log,
    buildEmbeddedMain: async (embedded, file) => {
      await buildTarget(name, { quiet: true, outfile: file, embedded })
    },
  })
}

function parseArgs(args) {
  const names = []
  let force = false
  let quiet = false
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    if (a === '--target') names.push(args[++i])
    else if (a.startsWith('--target=')) names.push(a.slice(9))
    else if (a === '--all') names.push(...listTargets(root))
    else if (a === '--force') force = true
    else if (a === '--quiet') quiet = true
    else throw new Error(`unknown argument '${a}' (usage: npm run sea -- --target NAME | --all [--force] [--quiet])`)
  }
  if (names.length === 0) throw new Error('name a target (--target NAME) or --all')
  return { names: [...new Set(names)], force, quiet }
}

async function main() {
  const { names, force, quiet } = parseArgs(process.argv.slice(2))
  for (const name of names) loadTarget(root, name)
  for (const name of names) {
    const r = await seaTarget(name, { force, quiet })
    if (!quiet && r.rebuilt)
      console.error(
        `  ${name}: ${Object.entries(r.timings)
          .map(([k, v]) => `${k} ${v} ms`)
          .join(', ')}`,
      )
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(`sea: ${e.message}`)
    process.exit(1)
  })
}
