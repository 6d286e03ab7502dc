/**
 * The file tinypool's workers load as their task module when tea runs as a bundle or single executable. The
 * bundle is built so that, loaded inside a tinypool worker, it exports the pool's worker handler instead of
 * starting the CLI (see build.mjs, `entrySource`), so one file serves both roles and the code is not shipped twice.
 *   - plain bundle: the bundle file itself;
 *   - single executable: the bundle carried as the SEA asset `tea.cjs` (or as text inside the bundle on Node
 *     20.11), written once to the cache dir, because a worker cannot load code from inside the executable.
 * Returns undefined when running from source: the pool then uses its own worker module.
 */
import { EMBEDDED } from './embedded.ts'
import { materialise, materialised } from './materialise.ts'
import { carriedFile, seaAsset } from './sea-api.ts'

export const WORKER_ASSET = 'tea.cjs'

export function bundledWorkerFile(): string | undefined {
  if (typeof __TEA_TARGET__ === 'undefined') return undefined
  const known = carriedFile(WORKER_ASSET)
  const earlier = materialised('js', WORKER_ASSET, known)
  if (earlier) return earlier
  const asset = seaAsset(WORKER_ASSET)
  if (asset) return materialise('js', WORKER_ASSET, asset, undefined, known?.hash)
  if (EMBEDDED?.workerBundle !== undefined)
    return materialise('js', WORKER_ASSET, Buffer.from(EMBEDDED.workerBundle), undefined, known?.hash)
  return typeof __filename === 'string' ? __filename : undefined
}
