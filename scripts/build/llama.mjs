// The llama feature's run-time files (src/feature-list.ts, `llama`): what a build carries so that a GGUF model runs
// in the tea process without node_modules. Two parts, which the build puts beside the bundle in `llama/` (and the
// single executable carries as SEA assets, written once to the cache dir: src/sea/llama-runtime.ts):
//   - `llama.cjs`: node-llama-cpp's JavaScript, bundled on its own (CommonJS, minified), only the names tea's code
//     imports from it (src/llm/gguf/**) and what they reach. Its binary lookup (getLlama.js: local builds, a
//     cloned llama.cpp, compiling with cmake, the `@node-llama-cpp/*` packages, a test fork of the process) is
//     replaced by one that loads `llama-addon.node` from the folder `llama.cjs` sits in, so the CLI and the
//     build-from-source path (cmake-js, simple-git, ipull, ora, yargs, which, …) are not in it;
//   - the prebuilt addon of the target's arch: `llama-addon.node` and the shared libraries it loads from its own
//     folder (libllama, libggml*: the runpath is $ORIGIN), stripped, and the build metadata node-llama-cpp reads.
// The program itself only gains a small loader (src/sea/llama-runtime.ts) behind the feature's `import()`.
import { build } from 'esbuild'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, openSync, readFileSync, readSync, closeSync, readdirSync, renameSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { builtFromSource, llamaFromSource } from './llama-source.mjs'
import { applyPatches } from './patch.mjs'
import { STANDALONE } from './plugins.mjs'

/** The `@node-llama-cpp/*` package with the CPU build for each of our arches (node's `process.arch`). */
export const LLAMA_PREBUILT = { x64: 'linux-x64', arm64: 'linux-arm64', arm: 'linux-armv7l' }

/** The ELF machine each arch's files must be built for (e_machine): 62 x86-64, 183 AArch64, 40 ARM (32-bit). */
const ELF_MACHINE = { x64: 62, arm64: 183, arm: 40 }
const ELF_CLASS = { x64: 2, arm64: 2, arm: 1 }

/** The name of `llama.cjs` among the files, the one src/sea/llama-runtime.ts requires. */
export const LLAMA_JS = 'llama.cjs'

/** The folder of the prebuilt package's binaries for `arch`. */
export function prebuiltDir(root, arch) {
  const pkg = LLAMA_PREBUILT[arch]
  if (!pkg) throw new Error(`llama: no prebuilt llama.cpp package for arch ${arch}`)
  let dir
  try {
    dir = join(dirname(createRequire(join(root, 'package.json')).resolve(`@node-llama-cpp/${pkg}`)), '..')
  } catch {
    throw new Error(`llama: @node-llama-cpp/${pkg} is not installed (it is an optional dependency of node-llama-cpp: run npm install)`)
  }
  return join(dir, 'bins', pkg)
}

/**
 * The prebuilt files of `arch`: every `.so`, the addon and the build metadata. Each ELF file is checked to be built
 * for `arch`: a package that carries another arch's binaries (every `@node-llama-cpp/linux-armv7l` on npm so far
 * does: x86-64 up to 3.18, AArch64 since 3.20) would load nowhere, so the build stops instead. `dir` names
 * another folder of such files (armv7's, compiled from source), checked the same way.
 */
export function prebuiltFiles(root, arch, dir = prebuiltDir(root, arch)) {
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.so') || f.endsWith('.node') || f === '_nlcBuildMetadata.json')
    .sort()
  if (!names.includes('llama-addon.node')) throw new Error(`llama: ${dir} has no llama-addon.node`)
  for (const f of names) {
    if (f.endsWith('.json')) continue
    const found = elfMachine(join(dir, f))
    if (found.machine !== ELF_MACHINE[arch] || found.cls !== ELF_CLASS[arch])
      throw new Error(
        `llama: ${join(dir, f)} is not built for ${arch} (ELF machine ${found.machine}, class ${found.cls}; want ${ELF_MACHINE[arch]}, class ${ELF_CLASS[arch]}): this @node-llama-cpp/${LLAMA_PREBUILT[arch]} release carries another architecture's binaries; turn the llama flag off for this target`,
      )
  }
  return Object.fromEntries(names.map((f) => [f, join(dir, f)]))
}

function elfMachine(file) {
  const fd = openSync(file, 'r')
  try {
    const head = Buffer.alloc(20)
    readSync(fd, head, 0, 20, 0)
    if (head.readUInt32BE(0) !== 0x7f454c46) return { machine: -1, cls: -1 }
    return { cls: head[4], machine: head.readUInt16LE(18) }
  } finally {
    closeSync(fd)
  }
}

/** The names tea's code imports from node-llama-cpp (not `import type`): what `llama.cjs` exports. */
export function importedNames(root) {
  const names = new Set()
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name.endsWith('.ts')) {
        const text = readFileSync(p, 'utf8')
        for (const m of text.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s+from\s+['"]node-llama-cpp['"]/g)) {
          if (m[1]) continue
          for (const spec of m[2].split(',').map((s) => s.trim())) {
            if (!spec || spec.startsWith('type ')) continue
            names.add(spec.split(/\s+as\s+/)[0])
          }
        }
        for (const m of text.matchAll(/(?:const|let|var)\s*\{([^{}]*)\}\s*=\s*await\s+import\(\s*['"]node-llama-cpp['"]\s*\)/g))
          for (const spec of m[1].split(',').map((s) => s.trim())) if (spec) names.add(spec.split(/\s*:\s*/)[0])
        if (/import\s+\*\s+as\s+\w+\s+from\s+['"]node-llama-cpp['"]/.test(text))
          throw new Error(`llama: ${p} imports node-llama-cpp as a namespace; import the names it uses, which llama.cjs then exports`)
      }
    }
  }
  const dir = join(root, 'src', 'llm', 'gguf')
  if (existsSync(dir)) walk(dir)
  return [...names].sort()
}

/**
 * `getLlama` as tea uses it: the prebuilt addon beside `llama.cjs`, CPU only, never built. Same exports as
 * node-llama-cpp's dist/bindings/getLlama.js (others import getLlamaForOptions and the paddings from it).
 */
const GET_LLAMA = `
import path from "path";
import { readFileSync } from "fs";
import { Llama } from "./Llama.js";
import { defaultLlamaCppLogLevel, defaultLlamaCppDebugMode } from "../config.js";
export const getLlamaFunctionName = "getLlama";
export const defaultLlamaVramPadding = (totalVram) => Math.floor(Math.min(totalVram * 0.08, 1.6 * Math.pow(1024, 3)));
export const defaultLlamaRamPadding = (totalRam) => Math.floor(Math.min(totalRam * 0.25, 1024 * 1024 * 1024));
let binding;
export async function getLlama(options) {
    return getLlamaForOptions(options === "lastBuild" ? {} : (options ?? {}));
}
export async function getLlamaForOptions(options, { skipLlamaInit = false } = {}) {
    if (options.gpu != null && options.gpu !== false && options.gpu !== "auto")
        throw new Error("tea carries llama.cpp's CPU build only (gpu: false)");
    if (options.build != null && options.build !== "never" && options.build !== "auto")
        throw new Error("tea carries a prebuilt llama.cpp and cannot build one (build: 'never')");
    const dir = __dirname;
    const bindingPath = path.join(dir, "llama-addon.node");
    const buildMetadata = JSON.parse(readFileSync(path.join(dir, "_nlcBuildMetadata.json"), "utf8"));
    if (binding == null) {
        const mod = { exports: {} };
        process.dlopen(mod, bindingPath);
        binding = mod.exports;
    }
    return await Llama._create({
        bindings: binding,
        bindingPath,
        extBackendsPath: undefined,
        buildType: "prebuilt",
        buildMetadata,
        logLevel: options.logLevel ?? defaultLlamaCppLogLevel,
        logger: options.logger ?? Llama.defaultConsoleLogger,
        maxThreads: options.maxThreads,
        vramPadding: options.vramPadding ?? defaultLlamaVramPadding,
        ramPadding: options.ramPadding ?? defaultLlamaRamPadding,
        skipLlamaInit,
        debug: options.debug ?? defaultLlamaCppDebugMode,
        numa: options.numa ?? false,
        tempDir: undefined,
        experimentalOptions: options.experimental
    });
}
`

/** Modules of node-llama-cpp's dist/ that only download or fetch models, replaced by stubs that throw. */
const STUBBED = ['utils/createModelDownloader.js', 'gguf/fileReaders/GgufNetworkFetchFileReader.js']

/** A stand-in for the module `file`: each exported function, class or value throws (or is undefined). */
function notInTea(file) {
  const text = readFileSync(file, 'utf8')
  const lines = []
  const fail = `throw new Error(${JSON.stringify(`tea reads GGUF files from disk only (${file.split('/dist/')[1]} is not carried)`)})`
  for (const m of text.matchAll(/^export (?:async )?(function|class|const|let) (\w+)/gm)) {
    if (m[1] === 'function') lines.push(`export function ${m[2]}() { ${fail} }`)
    else if (m[1] === 'class') lines.push(`export class ${m[2]} { constructor() { ${fail} } }`)
    else lines.push(`export const ${m[2]} = undefined`)
  }
  if (!lines.length) throw new Error(`llama: ${file} exports nothing the stub recognises; update scripts/build/llama.mjs`)
  return lines.join('\n')
}

/** node-llama-cpp's JavaScript for tea, as described at the top; returns its text and what it is made of. */
export async function llamaJs(root, names = importedNames(root)) {
  const req = createRequire(join(root, 'package.json'))
  const pkgDir = join(dirname(req.resolve('node-llama-cpp')), '..')
  const version = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version
  const release = JSON.parse(readFileSync(join(pkgDir, 'llama', 'binariesGithubRelease.json'), 'utf8')).release
  const dist = join(pkgDir, 'dist')
  const at = (p) => new RegExp(`${join(dist, p).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`)
  const exported = names.length ? names : ['getLlama']
  const out = await build({
    ...STANDALONE,
    stdin: { contents: `export { ${exported.join(', ')} } from 'node-llama-cpp'`, resolveDir: root, loader: 'js' },
    charset: 'ascii',
    metafile: true,
    // config.js and a few others turn their own URL into paths they never use here (build folders, templates).
    define: { 'import.meta.url': '__tea_llama_url' },
    banner: { js: 'var __tea_llama_url=require("url").pathToFileURL(__filename).href;' },
    plugins: [
      {
        name: 'tea-llama',
        setup(b) {
          b.onLoad({ filter: at('bindings/getLlama.js') }, () => ({
            contents: GET_LLAMA,
            loader: 'js',
            resolveDir: join(dist, 'bindings'),
          }))
          b.onLoad({ filter: at('bindings/utils/binariesGithubRelease.js') }, () => ({
            contents: [
              `export async function getBinariesGithubRelease() { return ${JSON.stringify(release)} }`,
              `export async function setBinariesGithubRelease() { throw new Error("not in tea") }`,
              `export const builtinLlamaCppRelease = ${JSON.stringify(release)}`,
              `export const defaultLlamaCppRelease = ${JSON.stringify(release)}`,
            ].join('\n'),
            loader: 'js',
          }))
          // Only its "is a llama.cpp checkout there?" answers are reached (named grammars, build folder names).
          b.onLoad({ filter: at('bindings/utils/cloneLlamaCppRepo.js') }, () => ({
            contents: [
              'export async function cloneLlamaCppRepo() { throw new Error("tea cannot clone llama.cpp") }',
              'export async function getClonedLlamaCppRepoReleaseInfo() { return null }',
              'export async function isLlamaCppRepoCloned() { return false }',
              'export async function ensureLlamaCppRepoIsCloned() { throw new Error("tea cannot clone llama.cpp") }',
            ].join('\n'),
            loader: 'js',
          }))
          // Downloading models (ipull) and reading GGUF files over HTTP: tea reads local files only.
          for (const file of STUBBED) b.onLoad({ filter: at(file) }, (args) => ({ contents: notInTea(args.path), loader: 'js' }))
          b.onLoad({ filter: at('utils/getModuleVersion.js') }, () => ({
            contents: `export async function getModuleVersion() { return ${JSON.stringify(version)} }`,
            loader: 'js',
          }))
        },
      },
    ],
  })
  const text = out.outputFiles[0].text
  const packages = {}
  for (const [file, { bytes }] of Object.entries(out.metafile.inputs)) {
    const m = /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(file)
    const key = m ? m[1] : relative(root, file)
    packages[key] = (packages[key] ?? 0) + bytes
  }
  for (const banned of ['cmake-js', 'simple-git', 'ipull', 'ora', 'yargs', '@node-llama-cpp/'])
    for (const p of Object.keys(packages))
      if (p === banned || p.startsWith(banned))
        throw new Error(`llama: ${p} reached llama.cjs; extend the stubs in scripts/build/llama.mjs`)
  return { text, packages, version, names: exported }
}

/** A stripped copy of a prebuilt ELF file, cached by content (the cross `strip` of its arch). */
function strippedCopy(file, arch, cacheDir, stripTool) {
  const bytes = readFileSync(file)
  const out = join(
    cacheDir,
    'llama-stripped',
    arch,
    `${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}-${file.split('/').pop()}`,
  )
  if (existsSync(out)) return out
  mkdirSync(dirname(out), { recursive: true })
  const tmp = `${out}.${process.pid}.tmp`
  copyFileSync(file, tmp)
  execFileSync(stripTool, ['--strip-unneeded', tmp])
  renameSync(tmp, out)
  return out
}

/**
 * The files of `llama/` for `target`: `llama.cjs` as text, the rest as paths (stripped when `strip` names the
 * arch's strip tool and a cache folder). Throws when the target's prebuilt package is missing or of another arch.
 */
export async function llamaFiles(root, target, { strip } = {}) {
  // armv7's package carries AArch64 files: its files are compiled from node-llama-cpp's source (llama-source.mjs).
  const source = builtFromSource(target.arch) ? await llamaFromSource(root, target.arch) : undefined
  const prebuilt = prebuiltFiles(root, target.arch, source)
  const js = await llamaJs(root)
  const files = {}
  for (const [name, file] of Object.entries(prebuilt))
    files[name] = strip && !name.endsWith('.json') ? strippedCopy(file, target.arch, strip.cacheDir, strip.tool) : file
  return { js, files }
}
