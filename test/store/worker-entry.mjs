// A worker thread does not inherit its parent's tsx loader on Node 20 (and ignores `--import tsx` in execArgv),
// so the worker registers tsx itself before loading the TypeScript side.
import { register } from 'tsx/esm/api'

register()
await import('./worker-writer.ts')
