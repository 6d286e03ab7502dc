/** The worker pool: a generic transport over tinypool (SPEC §3.7). Handlers for task kinds live with their layers. */

export type { MemberOutcome } from './batch.ts'
export type { HostMethods, Pool } from './pool.ts'
export type { HostCaller, PoolTask, TaskResult } from './protocol.ts'
