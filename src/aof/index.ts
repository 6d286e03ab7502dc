/**
 * AOF/1: the public surface of the task protocol (SPEC §3.9, docs/aof.md), and where its three rooms meet:
 * `protocol/` (the rules, no I/O), `store/` (the port, `fs/` and `nats/`) and `roles/` (written once over the
 * port). The functions below that take an `AofContext` are the roles and the filesystem store put together for a
 * data dir; a role on another store is called with that store (`roles/`).
 */

import type { AofContext } from './store/fs/context.ts'
import { fsTaskStore } from './store/fs/store.ts'
import type { PollOptions, PollResult } from './protocol/poll-result.ts'
import { schedulerPass } from './roles/scheduler-pass.ts'
import type { RouteOutcome } from './protocol/route-outcome.ts'
import { routeOn } from './roles/router.ts'
import { type SessionEndEntry, sessionEnd } from './roles/session-end.ts'

export { type AofContext, aofContext } from './store/fs/context.ts'
export { readEvents } from './store/fs/event-log.ts'
export { withFileLock } from './store/fs/file-lock.ts'
export { startHeartbeat } from './roles/heartbeat-loop.ts'
export { initDataDir } from './store/fs/init.ts'
export { acquireLease, heartbeat } from './store/fs/lease.ts'
export { lintDataDir } from './store/fs/lint.ts'
export { parseProtocolMessage } from './protocol/parse-message.ts'
export type { RouteOutcome } from './protocol/route-outcome.ts'
export { markRunArtifactExpired, readHeartbeat, readRun, readRunResult, writeRunResult } from './store/fs/run-artifacts.ts'
export { resultBelongsToRun } from './protocol/runs.ts'
export { checkStaleHeartbeats } from './store/fs/scheduler.ts'
export { resolveCompletionTransitions } from './protocol/outcome.ts'
export { MAX_ENVELOPE_BYTES } from './protocol/schemas/envelope.ts'
export { TASK_STATUSES, TRANSITIONS, type TaskStatus, isTaskStatus, isValidTransition } from './protocol/status.ts'
export { createTask } from './store/fs/task-create.ts'
export { type Task, taskLease } from './protocol/task-file.ts'
export { readTaskText } from './store/fs/read-task.ts'
export { isTaskId } from './protocol/task-id.ts'
export { MAX_TTL_MS, checkTtlMs } from './protocol/ttl.ts'
export { getTask, listTasks } from './store/fs/task-store.ts'
export { transitionTask, updateTask } from './store/fs/task-transition.ts'
export { workLogEntries } from './protocol/work-log.ts'

/** Parses and routes a raw message on the data dir's store (roles/router.ts `routeOn`). */
export function routeMessage(ctx: AofContext, input: unknown): Promise<RouteOutcome> {
  return routeOn(fsTaskStore(ctx), input)
}

/** `tea aof session-end` on the data dir (roles/session-end.ts). */
export function handleSessionEnd(ctx: AofContext): Promise<SessionEndEntry[]> {
  return sessionEnd(fsTaskStore(ctx))
}

/** `tea aof poll` on the data dir: the scheduler's pass (roles/scheduler-pass.ts). */
export function poll(ctx: AofContext, options: PollOptions = {}): Promise<PollResult> {
  return schedulerPass(fsTaskStore(ctx), options)
}
export { schedulerPass } from './roles/scheduler-pass.ts'
