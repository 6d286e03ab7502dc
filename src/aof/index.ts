/** AOF/1: the public surface of the filesystem task protocol (SPEC §3.9, docs/aof.md). */

export { type AofContext, aofContext } from './context.ts'
export { readEvents } from './events.ts'
export { withFileLock } from './file-lock.ts'
export { startHeartbeat } from './heartbeat-loop.ts'
export { initDataDir } from './init.ts'
export { acquireLease, heartbeat } from './lease.ts'
export { lintDataDir } from './lint.ts'
export { parseProtocolMessage } from './parse-message.ts'
export { type RouteOutcome } from './route-outcome.ts'
export { routeMessage } from './router.ts'
export {
  markRunArtifactExpired,
  readHeartbeat,
  readRun,
  readRunResult,
  resultBelongsToRun,
  writeRunResult,
} from './run-artifacts.ts'
export { checkStaleHeartbeats, poll } from './scheduler.ts'
export { handleSessionEnd } from './session-end.ts'
export { resolveCompletionTransitions } from './completion-outcome.ts'
export { MAX_ENVELOPE_BYTES } from './schemas/envelope.ts'
export { TASK_STATUSES, TRANSITIONS, type TaskStatus, isTaskStatus, isValidTransition } from './status.ts'
export { createTask } from './task-create.ts'
export { type Task, taskLease, readTaskText } from './task-file.ts'
export { isTaskId } from './task-id.ts'
export { MAX_TTL_MS, checkTtlMs } from './ttl.ts'
export { getTask, listTasks } from './task-store.ts'
export { transitionTask, updateTask } from './task-transition.ts'
export { workLogEntries } from './work-log.ts'
