/**
 * Pools of this process run test/support/probe-worker.ts in their workers: the product's task kinds plus `probe`
 * tasks (echo, sleep, spin, thread) for the pool's own tests. Call before the pool's first task.
 */

import { pathToFileURL } from 'node:url'

export function useProbeWorker(): void {
  globalThis.__TEA_WORKER__ = { filename: pathToFileURL(new URL('probe-worker.mjs', import.meta.url).pathname).href, name: 'runWorkerTask' }
}
