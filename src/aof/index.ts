/** AOF/1: the public surface of the filesystem task protocol (SPEC §3.9, docs/aof.md). */

export { type AofContext, aofContext } from './store/fs/context.ts'
export { readEvents } from './protocol/events.ts'
export { withFileLock } from './store/fs/file-lock.ts'
export { startHeartbeat } from './roles/heartbeat-loop.ts'
export { initDataDir } from './store/fs/init.ts'
export { acquireLease, heartbeat } from './store/fs/lease.ts'
export { lintDataDir } from './store/fs/lint.ts'
export { parseProtocolMessage } from './protocol/parse-message.ts'
export { type RouteOutcome } from './protocol/route-outcome.ts'
export { routeMessage } from './roles/router.ts'
export {
  markRunArtifactExpired,
  readHeartbeat,
  readRun,
  readRunResult,
  resultBelongsToRun,
  writeRunResult,
} from './store/fs/run-artifacts.ts'
export { checkStaleHeartbeats, poll } from './roles/scheduler.ts'
export { handleSessionEnd } from './store/fs/session-end.ts'
export { resolveCompletionTransitions } from './protocol/outcome.ts'
export { MAX_ENVELOPE_BYTES } from './protocol/schemas/envelope.ts'
export { TASK_STATUSES, TRANSITIONS, type TaskStatus, isTaskStatus, isValidTransition } from './protocol/status.ts'
export { createTask } from './store/fs/task-create.ts'
export { type Task, taskLease, readTaskText } from './protocol/task-file.ts'
export { isTaskId } from './protocol/task-id.ts'
export { MAX_TTL_MS, checkTtlMs } from './protocol/ttl.ts'
export { getTask, listTasks } from './store/fs/task-store.ts'
export { transitionTask, updateTask } from './store/fs/task-transition.ts'
export { workLogEntries } from './protocol/work-log.ts'
