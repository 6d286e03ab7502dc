// The entry of probe-worker.ts in a pool's worker thread: as src/worker-tsx.mjs, a worker does not inherit its
// parent's tsx loader on Node 20, so it registers tsx before importing the TypeScript.
import { register } from 'tsx/esm/api'

register()
const { runWorkerTask } = await import('./probe-worker.ts')
export { runWorkerTask }
