// Builds dist/<target>/tea.cjs for each target in targets/ (`--target NAME`, `--all`, or no argument for all).
// A target must give a value for every feature flag and no other (scripts/build/targets.mjs); the flags become
// esbuild `define`s, so a disabled feature's code is removed from the bundle. lmdb, msgpackr and tinypool are
// bundled in and patched so the same file runs as a plain bundle and as the main script of a single executable
// (scripts/build/plugins.mjs; the SEA itself is made by scripts/sea.mjs).
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { bundle } from './scripts/build/bundle.mjs'
import { readFeatureList } from './scripts/build/features.mjs'
import { LLAMA_JS, llamaFiles } from './scripts/build/llama.mjs'
import { builtFromSource, llamaSourceReady } from './scripts/build/llama-source.mjs'
import { FLAGS, featureTargets, listTargets, loadTarget } from './scripts/build/targets.mjs'
import { commandExists, stripFor } from './scripts/build/qemu.mjs'
import { buildCache } from './scripts/fetch-runtimes.mjs'

const root = dirname(fileURLToPath(import.meta.url))
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

/** The pool's worker module: loaded inside a tinypool worker, the bundle exports this instead of running the CLI. */
export const POOL_WORKER_MODULE = 'src/worker.ts'

/**
 * One bundle, two roles. tinypool's worker entry marks the thread (`process.__tinypool_state__`, set only there)
 * before it loads its task module, which for a bundle is the bundle itself (src/sea/worker-file.ts).
 */
export function entrySource() {
  // A TeaError thrown while modules initialise (lmdb's addon is loaded when lmdb's module runs) would otherwise
  // print a stack through one minified line; report it as the CLI reports errors.
  const cli = [
    `require('./src/sea/worker-hook.ts').installWorkerHook()`,
    `try {`,
    `  require('./src/cli/bin.ts')`,
    `} catch (e) {`,
    `  if (!e || e.name !== 'TeaError') throw e`,
    `  process.stderr.write('tea: ' + e.message + '\\n' + (e.hint ? 'hint: ' + e.hint + '\\n' : ''))`,
    `  process.exitCode = 1`,
    `}`,
  ].join('\n')
  if (!existsSync(join(root, POOL_WORKER_MODULE))) return cli
  return [
    `if (process.__tinypool_state__ && process.__tinypool_state__.isTinypoolWorker) {`,
    `  module.exports = require('./${POOL_WORKER_MODULE}')`,
    `} else {`,
    cli,
    `}`,
  ].join('\n')
}

/**
 * @param {string} name target name
 * @param {{ quiet?: boolean, outfile?: string, embedded?: { lmdbNode?: string, workerBundle?: string }, metafile?: boolean,
 *           features?: Record<string, boolean> }} [opts]
 */
export async function buildTarget(name, opts = {}) {
  const loaded = loadTarget(root, name)
  // `features` changes some of the target's flags (a bench comparing a build with and without one).
  const target = opts.features ? { ...loaded, features: { ...loaded.features, ...opts.features } } : loaded
  const outfile = opts.outfile ?? join(root, 'dist', name, 'tea.cjs')
  const define = {
    __TEA_TARGET__: JSON.stringify(name),
    __TEA_VERSION__: JSON.stringify(pkg.version),
  }
  for (const f of FLAGS) define[`__FEATURE_${f.toUpperCase()}__`] = String(target.features[f])
  define.__TEA_FEATURES__ = JSON.stringify(FLAGS.filter((f) => target.features[f]))
  const withFeature = featureTargets(root)
  define.__TEA_FEATURE_TARGETS__ = JSON.stringify(withFeature)
  // The llama feature's files (node-llama-cpp's JavaScript and the arch's prebuilt addon), put beside the bundle.
  const llama = target.features.llama ? await llamaFiles(root, target, { strip: llamaStrip(target) }) : undefined
  if (llama) define.__TEA_LLAMA_FILES__ = JSON.stringify([LLAMA_JS, ...Object.keys(llama.files)])
  const result = await bundle({
    root,
    entry: entrySource(),
    outfile,
    define,
    embedded: opts.embedded,
    metafile: opts.metafile,
    quiet: opts.quiet,
    target,
    buildsWithLlama: withFeature.llama,
  })
  const size = statSync(outfile).size
  copyEngineFiles(target, dirname(outfile))
  rmSync(join(dirname(outfile), 'llama'), { recursive: true, force: true })
  if (llama) {
    mkdirSync(join(dirname(outfile), 'llama'), { recursive: true })
    writeFileSync(join(dirname(outfile), 'llama', LLAMA_JS), llama.js.text)
    for (const [name, from] of Object.entries(llama.files)) copyFileSync(from, join(dirname(outfile), 'llama', name))
  }
  // No size bar for the bundle: SPEC §4 bounds what the single executable adds to its Node (bench/size.mjs).
  if (!opts.quiet) {
    const on = FLAGS.filter((f) => target.features[f]).join(', ') || 'none'
    console.error(`built ${outfile} (${(size / 1024).toFixed(1)} KB, features: ${on})`)
    if (llama) console.error(`  llama: ${llamaSizeLine(llama)}`)
  }
  return { outfile, size, target, metafile: result.metafile, ...(llama && { llama: llamaSizes(llama) }) }
}

/** The strip tool and cache for the llama feature's shared libraries, when this machine has the arch's `strip`. */
function llamaStrip(target) {
  const tool = stripFor(target.arch)
  return commandExists(tool) ? { tool, cacheDir: buildCache() } : undefined
}

/** What the llama feature adds to a build, in bytes: node-llama-cpp's JavaScript and the native files. */
export function llamaSizes(llama) {
  const native = Object.values(llama.files).reduce((n, f) => n + statSync(f).size, 0)
  return { js: Buffer.byteLength(llama.js.text), native, files: Object.keys(llama.files).length + 1 }
}

function llamaSizeLine(llama) {
  const { js, native, files } = llamaSizes(llama)
  const mb = (n) => `${(n / 1e6).toFixed(2)} MB`
  return `${files} files beside the bundle in llama/: node-llama-cpp ${llama.js.version} JavaScript ${(js / 1024).toFixed(1)} KB, addon and libraries ${mb(native)} (${mb(js + native)} in all)`
}

/** The files a feature reads at run time, by name beside the bundle (`prolog/swipl-web.wasm`), for a target. */
export function engineFiles(target) {
  const files = {}
  // A CommonJS loader (`.js` in its package) is carried as `.cjs`, so that it stays CommonJS wherever the build is
  // put (src/sea/runtime-files.ts).
  for (const { name, files: carried } of readFeatureList(root)) {
    if (!carried || !target.features[name]) continue
    const dir = dirname(createRequire(join(root, 'package.json')).resolve(carried.package))
    for (const f of carried.names) files[`${name}/${f}`] = join(dir, f.replace(/\.cjs$/, '.js'))
  }
  return files
}

/** Puts the engine files beside the bundle (src/prolog/files.ts reads them there), and removes those of a feature now off. */
function copyEngineFiles(target, dir) {
  for (const { name, files } of readFeatureList(root)) if (files) rmSync(join(dir, name), { recursive: true, force: true })
  for (const [name, from] of Object.entries(engineFiles(target))) {
    mkdirSync(dirname(join(dir, name)), { recursive: true })
    copyFileSync(from, join(dir, name))
  }
}

export function parseArgs(args) {
  const names = []
  let all = false
  let quiet = false
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    if (a === '--quiet') quiet = true
    else if (a === '--all') all = true
    else if (a === '--target') {
      const v = args[++i]
      if (!v || v.startsWith('--')) throw new Error('--target needs a name')
      names.push(v)
    } else if (a.startsWith('--target=')) names.push(a.slice('--target='.length))
    else throw new Error(`unknown argument '${a}' (usage: node build.mjs [--target NAME]... [--all] [--quiet])`)
  }
  return { names: all || names.length === 0 ? listTargets(root) : names, quiet, every: names.length === 0 && !all }
}

async function main() {
  const { names, quiet, every } = parseArgs(process.argv.slice(2))
  for (const name of names) loadTarget(root, name)
  for (const name of names) {
    // `npm run build` of every target does not start armv7's llama.cpp compile (12-22 minutes, once) unasked: that
    // target waits for `node scripts/build/llama-source.mjs`, `--target linux-armv7` or `--all`.
    const target = loadTarget(root, name)
    if (every && target.features.llama && builtFromSource(target.arch) && !llamaSourceReady(root, target.arch)) {
      console.error(
        `build: ${name} left out: its llama.cpp is compiled from source once (12-22 minutes on two cores, needs Debian's cross compiler): node scripts/build/llama-source.mjs, then npm run build again (or node build.mjs --target ${name})`,
      )
      continue
    }
    await buildTarget(name, { quiet })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(`build: ${e.message}`)
    process.exit(1)
  })
}
