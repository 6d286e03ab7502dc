/**
 * Tells the pool (src/pool/worker-location.ts) where its workers load their task module from when tea runs as
 * a bundle or single executable, through the embedder hook `globalThis.__TEA_WORKER__`. It is a getter so that
 * nothing is written to the cache dir unless a pool is actually created (an agent that never plans starts no
 * threads and extracts nothing). Installed by the bundle entry (build.mjs) before the CLI starts.
 */
import { pathToFileURL } from 'node:url'
import { WORKER_EXPORT } from '../pool/worker-location.ts'
import { bundledWorkerFile } from './worker-file.ts'

export function installWorkerHook(): void {
  if (Object.getOwnPropertyDescriptor(globalThis, '__TEA_WORKER__')) return
  let location: { filename: string; name: string } | undefined
  let resolved = false
  Object.defineProperty(globalThis, '__TEA_WORKER__', {
    configurable: true,
    enumerable: false,
    get() {
      if (!resolved) {
        // A failure (cache dir unusable) propagates to whoever creates the pool, and is tried again next time.
        const file = bundledWorkerFile()
        location = file === undefined ? undefined : { filename: pathToFileURL(file).href, name: WORKER_EXPORT }
        resolved = true
      }
      return location
    },
  })
}
