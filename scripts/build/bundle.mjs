// The esbuild call shared by build.mjs and the build tests: one minified CommonJS file for Node 20+, with lmdb,
// msgpackr and tinypool bundled in and patched (scripts/build/plugins.mjs).
import { build } from 'esbuild'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { embedPlugin, lmdbPlugin, slimPlugin, tinypoolPlugin } from './plugins.mjs'

/**
 * @param {{ root: string, entry: string, outfile: string, define?: Record<string, string>,
 *           embedded?: { lmdbNode?: string, workerBundle?: string }, metafile?: boolean, quiet?: boolean }} opts
 *   `entry` is the entry module's JavaScript source, resolved relative to `root`.
 */
export async function bundle(opts) {
  mkdirSync(dirname(opts.outfile), { recursive: true })
  return build({
    stdin: { contents: opts.entry, resolveDir: opts.root, sourcefile: 'tea-entry.cjs', loader: 'js' },
    outfile: opts.outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: true,
    legalComments: 'none',
    define: opts.define ?? {},
    plugins: [lmdbPlugin(opts.root), slimPlugin(opts.root), await tinypoolPlugin(opts.root), embedPlugin(opts.root, opts.embedded)],
    metafile: opts.metafile ?? false,
    logLevel: opts.quiet ? 'error' : 'warning',
  })
}
