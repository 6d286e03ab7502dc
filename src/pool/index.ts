/** The worker pool: a generic transport over tinypool (SPEC §3.7). Handlers for task kinds live with their layers. */

export { createPool, defaultConcurrency, type HostMethods, type Pool, type PoolOptions, type PoolRunResult, type RunOptions } from './pool.ts'
export type { HostCaller, PoolTask, TaskHandler, TaskResult } from './protocol.ts'
