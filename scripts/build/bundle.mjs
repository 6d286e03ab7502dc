// The esbuild calls shared by build.mjs and the build tests. A bundle is one minified CommonJS file for Node 20+:
// the program (the CLI and the pool worker, with lmdb, msgpackr and tinypool bundled in and patched:
// scripts/build/plugins.mjs) carried behind a small loader (src/sea/loader.ts) that answers --version and
// compiles the program with a code cache (scripts/build/program.mjs has the file's format).
import { build } from 'esbuild'
import { createHash } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { embedPlugin, lazyBuiltinsPlugin, llamaPlugin, lmdbPlugin, slimPlugin, tinypoolPlugin } from './plugins.mjs'
import { composeBundle } from './program.mjs'

/** The loader's entry: the whole top level of a bundle file. */
export const LOADER_ENTRY = `require('./src/sea/loader.ts').boot(module, require, __filename)`

const COMMON = { bundle: true, platform: 'node', format: 'cjs', target: 'node20', minify: true, legalComments: 'none', write: false }

/**
 * @param {{ root: string, entry: string, outfile: string, define?: Record<string, string>,
 *           embedded?: { lmdbNode?: string, workerBundle?: string }, metafile?: boolean, quiet?: boolean, minify?: boolean,
 *           target?: object, buildsWithLlama?: string[] }} opts
 *   `entry` is the program's entry module source, resolved relative to `root`. With `embedded` (the armv7
 *   executable's main script, which has no assets to read the program from) the program is written alone.
 * @returns the program's esbuild result (its metafile lists the program's modules)
 */
export async function bundle(opts) {
  mkdirSync(dirname(opts.outfile), { recursive: true })
  const logLevel = opts.quiet ? 'error' : 'warning'
  const program = await build({
    ...COMMON,
    minify: opts.minify ?? true, // off only to read a profile
    stdin: { contents: opts.entry, resolveDir: opts.root, sourcefile: 'tea-entry.cjs', loader: 'js' },
    outfile: opts.outfile,
    define: opts.define ?? {},
    plugins: [
      lazyBuiltinsPlugin(),
      lmdbPlugin(opts.root),
      await slimPlugin(opts.root),
      await tinypoolPlugin(opts.root),
      embedPlugin(opts.root, opts.embedded),
      ...(opts.target ? [llamaPlugin(opts.root, opts.target, opts.buildsWithLlama ?? [])] : []),
    ],
    metafile: opts.metafile ?? false,
    logLevel,
  })
  const text = program.outputFiles[0].text
  if (opts.embedded) {
    writeFileSync(opts.outfile, text)
    return program
  }
  const loader = await build({
    ...COMMON,
    stdin: { contents: LOADER_ENTRY, resolveDir: opts.root, sourcefile: 'tea-loader.cjs', loader: 'js' },
    outfile: opts.outfile,
    define: { ...opts.define, __TEA_PROGRAM_HASH__: JSON.stringify(createHash('sha256').update(text).digest('hex').slice(0, 16)) },
    logLevel,
  })
  writeFileSync(opts.outfile, composeBundle(loader.outputFiles[0].text, text))
  return program
}
