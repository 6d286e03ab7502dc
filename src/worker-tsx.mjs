// Worker entry when tea runs from source (tests, `node --import tsx`): a worker thread does not inherit the
// tsx loader of its parent on Node 20, and `--import tsx` in a worker's execArgv is not honoured there, so the
// worker registers tsx itself before importing the TypeScript entry.
import { register } from 'tsx/esm/api'

register()
const { runWorkerTask } = await import('./worker.ts')
export { runWorkerTask }
