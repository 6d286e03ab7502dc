// esbuild plugins that make third-party packages work from one CommonJS bundle and from inside a Node single
// executable (SEA), where `require` loads built-ins only and nothing next to the bundle exists on disk.
// The recipe and the reasons are in the research notes (sea-arm.md §4–5); each text patch fails the build when
// the text it expects is not found (scripts/build/patch.mjs).
import { build } from 'esbuild'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { applyPatches } from './patch.mjs'

/**
 * The module a lazy facade is: it stands in for `spec`, and each of `names` (functions or classes) requires the real
 * module on its first call and calls through (with `new`, it constructs the real class; `instanceof` against the
 * stand-in does not hold, and nothing here uses it). A bundle runs every module it imports at start; a facade
 * makes a module run at its first use instead.
 */
function lazyFacade(spec, names) {
  return facadeLoading(`require(${JSON.stringify(spec)})`, names)
}

const BUILTIN_MODULE = fileURLToPath(new URL('../../src/core/builtin.ts', import.meta.url))

/** A facade whose module is what the expression `load` gives, evaluated at the first call. */
function facadeLoading(load, names) {
  return [
    `let m`,
    `const load = () => m || (m = ${load})`,
    ...names.map((k) => `export function ${k}(...a) { return new.target ? new (load().${k})(...a) : load().${k}(...a) }`),
  ].join('\n')
}

/**
 * Gives our code a facade of package `name` (the module `file`) whose text is `contents` (a `lazyFacade`): the
 * facade's own `require` of the name resolves to the package, every other import of it to the facade. Importing a
 * name the facade does not export fails the build.
 */
function facadeOf(b, root, name, file, contents) {
  b.onResolve({ filter: new RegExp(`^${name}$`) }, (args) =>
    args.namespace === 'tea-stub' ? { path: file } : { path: `${name}-lazy`, namespace: 'tea-stub' },
  )
  b.onLoad({ filter: new RegExp(`^${name}-lazy$`), namespace: 'tea-stub' }, () => ({
    contents,
    resolveDir: root,
    loader: 'js',
  }))
}

/**
 * lmdb + msgpackr:
 * - resolve lmdb to its CommonJS build (its ESM build reads `import.meta.url`, which is undefined in a CJS bundle);
 * - resolve msgpackr to its platform-neutral ESM entry (`index.js`: no `import.meta`, no stream classes, 12 KB
 *   smaller than `dist/node.cjs`); lmdb's own nested msgpackr 1.x is replaced by the project's msgpackr 2.x (lmdb
 *   uses only `Encoder`, which 2.0 kept), so the bundle carries one copy;
 * - replace lmdb's native loader with src/sea/lmdb-addon.ts;
 * - stub msgpackr-extract (optional native helper) as `module.exports = undefined` — an object stub would make
 *   msgpackr install an undefined extractor and fail on large strings;
 * - inline lmdb's default compression dictionary, which it otherwise reads from disk next to its own file;
 * - ordered-binary builds its string reader (generated code, through eval: never in the code cache) on first use,
 *   not as it loads: ~1 ms of every start, and a short run reads no string key;
 * - keep lmdb from loading `node:module` and `node:os` when it starts (~1.5 ms of every run; issue 14): its
 *   `createRequire` only serves cbor-x (not used) and Node 16–18, so the bundle's `require` stands in for it, and
 *   of `node:os` it wants the platform, arch and byte order, which `process` has (os.arch() is process.arch), and
 *   `tmpdir` for temporary databases (never opened here), loaded if asked for;
 * - give our code a lazy facade of lmdb (`open`, `keyValueToBuffer`): lmdb loads its native addon when its module
 *   runs, and a bundle runs every module at start, so without the facade `tea --version` would extract and
 *   dlopen the addon (and fail where it cannot). Importing any other name fails the build: add it to LMDB_API.
 */
export const LMDB_API = ['open', 'keyValueToBuffer']

export function lmdbPlugin(root) {
  const req = createRequire(join(root, 'package.json'))
  const lmdbFile = req.resolve('lmdb')
  const msgpackrFile = join(dirname(req.resolve('msgpackr')), '..', 'index.js')
  const msgpackrPack = join(dirname(msgpackrFile), 'pack.js')
  const dict = readFileSync(join(dirname(lmdbFile), '..', 'dict', 'dict.txt'))
  if (!Buffer.from(dict.toString('utf8'), 'utf8').equals(dict))
    throw new Error('lmdb dict/dict.txt is not valid UTF-8; inline it as base64 instead')
  const loader = join(root, 'src', 'sea', 'lmdb-addon.ts')
  return {
    name: 'tea-lmdb',
    setup(b) {
      facadeOf(b, root, 'lmdb', lmdbFile, lazyFacade('lmdb', LMDB_API))
      // lmdb uses only `msgpackr.Encoder` (from pack.js); a namespace `require` would keep every export.
      b.onResolve({ filter: /^msgpackr$/ }, (args) => ({ path: args.importer === lmdbFile ? msgpackrPack : msgpackrFile }))
      b.onResolve({ filter: /^node-gyp-build-optional-packages$/ }, () => ({ path: 'lmdb-loader', namespace: 'tea-stub' }))
      b.onResolve({ filter: /^msgpackr-extract$/ }, () => ({ path: 'msgpackr-extract', namespace: 'tea-stub' }))
      // Only reached under `process.isBun`; never loaded by Node.
      b.onResolve({ filter: /^bun:ffi$/ }, () => ({ path: 'bun:ffi', external: true }))
      b.onLoad({ filter: /^lmdb-loader$/, namespace: 'tea-stub' }, () => ({
        contents: `module.exports = function loadLmdbNative() { return require(${JSON.stringify(loader)}).loadLmdbAddon() }`,
        resolveDir: root,
        loader: 'js',
      }))
      b.onLoad({ filter: /^msgpackr-extract$/, namespace: 'tea-stub' }, () => ({ contents: 'module.exports = undefined', loader: 'js' }))
      b.onLoad({ filter: /[\\/]lmdb[\\/]dist[\\/]index\.cjs$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8')
        const contents = applyPatches(text, args.path, [
          {
            why: 'lmdb: inline dict/dict.txt',
            find: /fs\.readFileSync\(\s*new URL\(\s*'\.\/dict\/dict\.txt',\s*\(typeof document[^\n]*\n\s*\),\s*\)/,
            replace: `Buffer.from(${JSON.stringify(dict.toString('utf8'))}, 'utf8')`,
          },
          { why: 'lmdb: no node:module at start', find: "var node_module = require('node:module');\n", replace: '' },
          {
            why: "lmdb: the bundle's require",
            find: /let require\$1 = node_module\.createRequire\([^\n]*\);/,
            replace: 'let require$1 = require;',
          },
          {
            why: 'lmdb: no node:os at start',
            find: "var node_os = require('node:os');",
            // endianness() is asked on writes too: the byte order is found once, as os finds it once.
            replace: [
              "var node_os_endianness = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 'LE' : 'BE';",
              'var node_os = {',
              '  arch: () => process.arch,',
              '  platform: () => process.platform,',
              '  endianness: () => node_os_endianness,',
              "  tmpdir: () => require('node:os').tmpdir(),",
              '};',
            ].join('\n'),
          },
        ])
        return { contents, loader: 'js' }
      })
      b.onLoad({ filter: /[\\/]ordered-binary[\\/]dist[\\/]index\.cjs$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8')
        const contents = applyPatches(text, args.path, [
          {
            why: 'ordered-binary: build its string reader when first used, not at every start (~1 ms)',
            find: '\t\teval(makeStringBuilder());\n',
            replace: [
              '\t\t(source) => (readStringBuilt || (readStringBuilt = eval(makeStringBuilder())))(source);',
              'let readStringBuilt;',
              '',
            ].join('\n'),
          },
        ])
        return { contents, loader: 'js' }
      })
    },
  }
}

/** What our code imports from `yaml` (src/agent/parse.ts, src/aof/frontmatter.ts); any other name fails the build. */
const YAML_API = ['parse', 'parseDocument', 'stringify', 'isMap', 'LineCounter']

/**
 * Smaller equivalents of packages written for browsers as well as Node:
 * - `whatwg-fetch` (imported by ollama for its side effect, a fetch polyfill) is empty: Node 20+ has fetch;
 * - `yaml` (its ESM build, the names in YAML_API) is a side module: bundled apart into a CommonJS text the program
 *   carries, behind a lazy facade that compiles it at its first call with a code cache of its own
 *   (src/sea/side-module.ts). A start whose agent's parse is kept (src/agent/parse-cache.ts) neither runs its 73
 *   modules (~0.25 ms on x64) nor deserialises its functions with the program's code cache (175 of 915 KB, ~0.45
 *   ms); bench/RESULTS.md, issue 14;
 * - ollama tells a `Headers` object by its tag, not `instanceof Headers`: reading that global loads Node's fetch
 *   (undici), ~20–33 ms of a start, which tea's own HTTP client (src/core/http.ts) avoids.
 */
export async function slimPlugin(root) {
  const req = createRequire(join(root, 'package.json'))
  const yamlEsm = join(dirname(req.resolve('yaml/package.json')), 'browser', 'index.js')
  const yaml = await sideText(root, yamlEsm, YAML_API)
  const sideModule = join(root, 'src', 'sea', 'side-module.ts')
  return {
    name: 'tea-slim',
    setup(b) {
      b.onResolve({ filter: /^whatwg-fetch$/ }, () => ({ path: 'whatwg-fetch', namespace: 'tea-stub' }))
      b.onLoad({ filter: /^whatwg-fetch$/, namespace: 'tea-stub' }, () => ({ contents: '', loader: 'js' }))
      // The text sits in the loading function, whose constants the code cache holds as one string.
      const loadSide = `sideModule('yaml', ${JSON.stringify(yaml.hash)}, ${JSON.stringify(yaml.text)})`
      facadeOf(b, root, 'yaml', yamlEsm, `import { sideModule } from ${JSON.stringify(sideModule)}\n${facadeLoading(loadSide, YAML_API)}`)
      b.onLoad({ filter: /[\\/]ollama[\\/]dist[\\/]browser\.mjs$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8')
        const contents = applyPatches(text, args.path, [
          {
            why: 'ollama: tell Headers apart without loading fetch',
            find: 'if (headers instanceof Headers) {',
            replace: "if (Object.prototype.toString.call(headers) === '[object Headers]') {",
          },
        ])
        return { contents, loader: 'js' }
      })
    },
  }
}

/** A script of its own, in memory: what tinypool's worker entry and side modules are built as. */
export const STANDALONE = {
  bundle: true,
  write: false,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: true,
  legalComments: 'none',
  logLevel: 'silent',
}

/**
 * A side module's text (src/sea/side-module.ts): `names` of `file` bundled into minified CommonJS on its own,
 * ASCII like the program, needing nothing `require` would give; and the first 16 hex digits of its SHA-256.
 */
async function sideText(root, file, names) {
  const out = await build({
    ...STANDALONE,
    stdin: { contents: `export { ${names.join(', ')} } from ${JSON.stringify(file)}`, resolveDir: root, loader: 'js' },
    charset: 'ascii',
  })
  const text = out.outputFiles[0].text
  if (/\brequire\(/.test(text)) throw new Error(`side module ${file} requires other modules; a side module must be self-contained`)
  return { text, hash: createHash('sha256').update(text).digest('hex').slice(0, 16) }
}

/**
 * tinypool 2.x starts every worker with `new Worker(<its dist>/entry/worker.js)` and has no option for another
 * entry. Inside a SEA that file does not exist, and in any CJS bundle `import.meta.url` is undefined. The patch
 * starts the worker from tinypool's entry bundled into a string (`eval: true`), so no tinypool file is needed on
 * disk; the task module (our bundle) is still loaded by path. The child_process runtime would fork
 * `process.execPath`, which inside a SEA is tea itself, so it is refused.
 */
export async function tinypoolPlugin(root) {
  const req = createRequire(join(root, 'package.json'))
  const pkgFile = req.resolve('tinypool/package.json')
  const version = JSON.parse(readFileSync(pkgFile, 'utf8')).version
  const entry = join(dirname(pkgFile), 'dist', 'entry', 'worker.js')
  const out = await build({ ...STANDALONE, entryPoints: [entry] })
  const workerSrc = out.outputFiles[0].text
  return {
    name: 'tea-tinypool',
    setup(b) {
      // Our code gets a lazy facade: tinypool's module pulls in worker_threads, child_process, assert and
      // perf_hooks, which an agent that never plans (and `tea --version`) should not pay for at start.
      // `new Tinypool(…)` returns the real pool; `instanceof Tinypool` does not hold, and nothing here uses it.
      const tinypoolFile = join(dirname(pkgFile), 'dist', 'index.js')
      facadeOf(b, root, 'tinypool', tinypoolFile, `${lazyFacade('tinypool', ['Tinypool'])}\nexport default Tinypool`)
      b.onLoad({ filter: /[\\/]tinypool[\\/]dist[\\/]index\.js$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8')
        const contents = applyPatches(text, args.path, [
          {
            why: 'tinypool: start workers from the embedded entry',
            find: 'new Worker(fileURLToPath(import.meta.url + "/../entry/worker.js"), options)',
            replace: `new Worker(${JSON.stringify(workerSrc)}, { ...options, eval: true })`,
          },
          {
            why: 'tinypool: refuse the child_process runtime',
            find: 'fork(fileURLToPath(import.meta.url + "/../entry/process.js"), options.argv, {',
            replace:
              'fork((() => { throw new Error("tea: tinypool runtime \'child_process\' is not available in the bundle; use worker_threads") })(), options.argv, {',
          },
          {
            why: 'tinypool: version without reading package.json',
            find: 'JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf-8"))',
            replace: `({ version: ${JSON.stringify(version)} })`,
          },
        ])
        if (contents.includes('import.meta'))
          throw new Error(`tinypool: ${args.path} still uses import.meta after patching; extend the patch in scripts/build/plugins.mjs`)
        return { contents, loader: 'js' }
      })
    },
  }
}

/**
 * Node built-ins whose loading is deferred to their first use. A bundle runs every module it needs at start, and a
 * module that imports `node:crypto` for one hash makes every start pay for crypto's own modules (~4 ms on x64,
 * most of `tea run`'s built-in cost: issue 14). A module of ours (src/) that imports only functions from one of
 * these gets a stand-in module instead: each function requires the real module on its first call and calls
 * through (with `new`, it constructs the real class), so `createHash(…)` costs a start nothing until it runs; the
 * real module then loads from Node's code cache, as CACHED_BUILTINS says.
 * Everything else gets the real module: an importer that takes a value (`threadId`), a default or a namespace, and
 * packages, whose code may extend a class or read a function's properties (the ones that import these, tinypool
 * and lmdb, are loaded lazily themselves). The names come from the building Node's module (tea must run on Node
 * 20, so it uses nothing newer).
 */
export const LAZY_BUILTINS = ['crypto', 'worker_threads', 'child_process', 'v8', 'os', 'module', 'http']

/**
 * Built-ins no start loads before tea's code runs (Node's own start has the others), which bundled code may
 * require as its module initialises (the NATS client: net, tls, dns). Whoever requires one of these, or of
 * LAZY_BUILTINS, without a facade gets the real module loaded under `withNodeCache`, so that it comes from Node's
 * code cache rather than being compiled from source under the executables' V8 flags (issue 14).
 */
const CACHED_BUILTINS = ['net', 'tls', 'dns', 'https', 'http2', 'zlib', 'stream', 'readline', 'perf_hooks', 'assert', 'cluster', 'dgram']

export function lazyBuiltinsPlugin(names = LAZY_BUILTINS) {
  const req = createRequire(import.meta.url)
  const filter = new RegExp(`^(node:)?(${[...names, ...CACHED_BUILTINS].join('|')})$`)
  const identifier = /^[A-Za-z_$][\w$]*$/
  const onlyFunctions = new Map()
  /** True when every import of `builtin` in `file` names functions only (`import { a, b as c } from …`). */
  const importsOnlyFunctions = (file, builtin) => {
    const key = `${file}\0${builtin}`
    if (!onlyFunctions.has(key)) {
      const real = req(`node:${builtin}`)
      const text = readFileSync(file, 'utf8')
      const from = new RegExp(`import\\s+(type\\s+)?([^'";]*?)\\s+from\\s+['"](node:)?${builtin}['"]`, 'g')
      let ok = true
      for (const m of text.matchAll(from)) {
        if (m[1]) continue // types only
        const named = /^\{([^}]*)\}$/.exec(m[2].trim())
        if (!named) ok = false
        else
          for (const spec of named[1]
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean)) {
            const name = spec.replace(/^type\s+/, '').split(/\s+as\s+/)[0]
            if (!spec.startsWith('type ') && typeof real[name] !== 'function') ok = false
          }
      }
      onlyFunctions.set(key, ok)
    }
    return onlyFunctions.get(key)
  }
  return {
    name: 'tea-lazy-builtins',
    setup(b) {
      b.onResolve({ filter }, (args) => {
        const builtin = args.path.replace(/^node:/, '')
        // A facade's require loads the real module under withNodeCache; that stand-in's own require reaches Node.
        if (args.namespace === 'tea-cached-builtin') return { path: `node:${builtin}`, external: true }
        if (args.namespace === 'tea-lazy-builtin') return { path: builtin, namespace: 'tea-cached-builtin' }
        const ours = /[\\/]src[\\/]/.test(args.importer) && !/node_modules/.test(args.importer)
        const lazy = names.includes(builtin) && ours && importsOnlyFunctions(args.importer, builtin)
        return { path: builtin, namespace: lazy ? 'tea-lazy-builtin' : 'tea-cached-builtin' }
      })
      b.onLoad({ filter: /.*/, namespace: 'tea-cached-builtin' }, (args) => ({
        contents: [
          `const { withNodeCache } = require(${JSON.stringify(BUILTIN_MODULE)})`,
          `module.exports = withNodeCache(() => require(${JSON.stringify(`node:${args.path}`)}))`,
        ].join('\n'),
        resolveDir: dirname(BUILTIN_MODULE),
        loader: 'js',
      }))
      b.onLoad({ filter: /.*/, namespace: 'tea-lazy-builtin' }, (args) => {
        const real = req(`node:${args.path}`)
        const names = Object.keys(real).filter((k) => identifier.test(k) && typeof real[k] === 'function')
        return { contents: lazyFacade(`node:${args.path}`, names), loader: 'js' }
      })
    },
  }
}

/**
 * node-llama-cpp in a bundle: every `import('node-llama-cpp')` (src/llm/gguf/) gets the copy the build carries in
 * `llama/` (scripts/build/llama.mjs), loaded by src/sea/llama-runtime.ts when first imported, so none of its
 * JavaScript is in the program. In a target without the llama feature, node-llama-cpp is a module that fails with a
 * coded error naming the builds that have it, and so is the GGUF provider (src/llm/gguf/provider.ts: each function
 * it exports throws that error), so that the provider's modules, the addon loader and node-llama-cpp are all left
 * out; `gguf:` models then fail at their first call, as a model server that is not there does.
 */
export const GGUF_PROVIDER = 'src/llm/gguf/provider.ts'

export function llamaPlugin(root, target, buildsWithLlama) {
  const runtime = join(root, 'src', 'sea', 'llama-runtime.ts')
  const errors = join(root, 'src', 'core', 'errors.ts')
  const provider = join(root, GGUF_PROVIDER)
  const on = target.features.llama === true
  const listed = (and) =>
    `${buildsWithLlama.slice(0, -1).join(', ')}${buildsWithLlama.length > 1 ? ` ${and} ` : ''}${buildsWithLlama.at(-1) ?? ''}`
  const builds = buildsWithLlama.length ? listed('and') : 'no'
  const error = [
    `new TeaError('LLM_BAD_MODEL', ${JSON.stringify(
      `this build (${target.name}) cannot run GGUF models: it lacks the 'llama' feature (llama.cpp); the ${builds} builds have it`,
    )}, { hint: ${JSON.stringify(`use the ${listed('or') || 'full'} tea executable for gguf: models, or a model server (ollama:<name>)`)} })`,
  ].join('')
  const stub = (names) =>
    [`import { TeaError } from ${JSON.stringify(errors)}`, ...names.map((n) => `export function ${n}() { throw ${error} }`)].join('\n')
  return {
    name: 'tea-llama',
    setup(b) {
      b.onResolve({ filter: /^node-llama-cpp$/ }, () => ({ path: 'node-llama-cpp', namespace: 'tea-llama' }))
      b.onLoad({ filter: /^node-llama-cpp$/, namespace: 'tea-llama' }, () => ({
        contents: on
          ? `module.exports = require(${JSON.stringify(runtime)}).llamaModule()`
          : `const { TeaError } = require(${JSON.stringify(errors)})\nthrow ${error}`,
        resolveDir: root,
        loader: 'js',
      }))
      if (on) return
      b.onLoad({ filter: /[\\/]src[\\/]llm[\\/]gguf[\\/]provider\.ts$/ }, (args) => {
        if (args.path !== provider) return undefined
        const text = readFileSync(provider, 'utf8')
        const names = [...text.matchAll(/^export (?:async )?function (\w+)/gm)].map((m) => m[1])
        if (!names.length || /^export (?!(?:async )?function |type |interface )/m.test(text))
          throw new Error(
            `${GGUF_PROVIDER} exports something other than functions; extend its stub in scripts/build/plugins.mjs (llamaPlugin)`,
          )
        return { contents: stub(names), resolveDir: root, loader: 'ts' }
      })
    },
  }
}

/** Fills src/sea/embedded.ts with payloads (armv7 SEA main only); other builds keep its `undefined`. */
export function embedPlugin(root, embedded) {
  const file = join(root, 'src', 'sea', 'embedded.ts')
  return {
    name: 'tea-embed',
    setup(b) {
      if (!embedded) return
      let used = false
      b.onLoad({ filter: /[\\/]src[\\/]sea[\\/]embedded\.ts$/ }, (args) => {
        if (args.path !== file) return undefined
        used = true
        return { contents: `export const EMBEDDED = ${JSON.stringify(embedded)}`, loader: 'ts' }
      })
      b.onEnd((result) => {
        if (!used && result.errors.length === 0) throw new Error(`embed: ${file} was not part of the bundle, so the payloads would be lost`)
      })
    },
  }
}
