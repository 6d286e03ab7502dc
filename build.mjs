// Builds dist/<target>/tea.cjs for each target in targets/ (or the one named by --target).
// A target must give a value for every feature flag in FLAGS and no other; the flags become esbuild `define`s so
// a disabled feature's code is removed from the bundle.
import { build } from 'esbuild'
import { readFileSync, readdirSync, mkdirSync, statSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = dirname(fileURLToPath(import.meta.url))
const FLAGS = ['planning', 'reasoning']
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

function loadTarget(name) {
  const file = join(root, 'targets', `${name}.json`)
  let target
  try {
    target = JSON.parse(readFileSync(file, 'utf8'))
  } catch (e) {
    throw new Error(`unknown target '${name}': cannot read ${file} (${e.message})`)
  }
  const features = target.features ?? {}
  const missing = FLAGS.filter((f) => typeof features[f] !== 'boolean')
  const unknown = Object.keys(features).filter((f) => !FLAGS.includes(f))
  if (missing.length) throw new Error(`target ${name}: feature flag(s) not set: ${missing.join(', ')} (each must be true or false)`)
  if (unknown.length) throw new Error(`target ${name}: unknown feature flag(s): ${unknown.join(', ')} (known: ${FLAGS.join(', ')})`)
  return target
}

export async function buildTarget(name, { quiet = false } = {}) {
  const target = loadTarget(name)
  const outfile = join(root, 'dist', name, 'tea.cjs')
  mkdirSync(dirname(outfile), { recursive: true })
  const define = {
    __TEA_TARGET__: JSON.stringify(name),
    __TEA_VERSION__: JSON.stringify(pkg.version),
  }
  for (const f of FLAGS) define[`__FEATURE_${f.toUpperCase()}__`] = String(target.features[f])
  await build({
    entryPoints: [join(root, 'src/cli/bin.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: true,
    legalComments: 'none',
    define,
    external: ['lmdb', 'msgpackr'],
    logLevel: 'warning',
  })
  if (!quiet) console.error(`built ${outfile} (${statSync(outfile).size} bytes, features: ${FLAGS.filter((f) => target.features[f]).join(', ') || 'none'})`)
  return outfile
}

async function main() {
  const args = process.argv.slice(2)
  const quiet = args.includes('--quiet')
  const i = args.indexOf('--target')
  const names = i >= 0 ? [args[i + 1]] : readdirSync(join(root, 'targets')).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5))
  for (const name of names) await buildTarget(name, { quiet })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(`build: ${e.message}`)
    process.exit(1)
  })
}
