/**
 * Where the pool's workers load their task handler from. Four situations, tried in this order:
 * 1. an embedder says so: `globalThis.__TEA_WORKER__ = {filename, name}` (the single executable materialises the
 *    worker source and points here), or `TEA_WORKER_FILE` in the environment (name `runWorkerTask`);
 * 2. from source (this module is a `.ts` file): `src/worker-tsx.mjs`, which registers tsx in the worker;
 * 3. from the bundle with a separate worker bundle beside it (`tea-worker.cjs`);
 * 4. from the bundle alone: the bundle itself, which exports `runWorkerTask` and must not start the CLI when it
 *    is loaded inside a pool worker (build.mjs's entry checks `process.__tinypool_state__`).
 */

import { existsSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { TeaError } from '../core/errors.ts'

export interface WorkerLocation {
  filename: string
  name: string
}

declare global {
  // eslint-disable-next-line no-var
  var __TEA_WORKER__: WorkerLocation | undefined
}

export const WORKER_EXPORT = 'runWorkerTask'

export function workerLocation(): WorkerLocation {
  if (globalThis.__TEA_WORKER__) return globalThis.__TEA_WORKER__
  const fromEnv = process.env.TEA_WORKER_FILE
  if (fromEnv) return { filename: toUrl(fromEnv), name: WORKER_EXPORT }
  const here = thisFile()
  if (here.endsWith('.ts')) return { filename: toUrl(path.join(path.dirname(here), '..', 'worker-tsx.mjs')), name: WORKER_EXPORT }
  const sibling = path.join(path.dirname(here), 'tea-worker.cjs')
  if (existsSync(sibling)) return { filename: toUrl(sibling), name: WORKER_EXPORT }
  return { filename: toUrl(here), name: WORKER_EXPORT }
}

function thisFile(): string {
  // CJS (the bundle, or tsx's require hook) has `__filename`. ESM source under tsx does not, and `import.meta` must
  // not appear in this file: esbuild warns about it in every CJS build. This function's own stack frame names the
  // file instead (tsx keeps source paths in stack traces).
  if (typeof __filename === 'string' && __filename !== '') return __filename
  const frame = /(?:file:\/\/)?(\/[^\s():]*\/worker-location\.ts)/.exec(new Error().stack ?? '')
  if (frame) return frame[1]!
  throw new TeaError('POOL_ERROR', 'cannot tell where the pool worker entry is; set TEA_WORKER_FILE to its path')
}

function toUrl(file: string): string {
  return file.startsWith('file:') || file.startsWith('data:') ? file : pathToFileURL(file).href
}
