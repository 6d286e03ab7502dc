/** AOF/1: the public surface of the filesystem task protocol (SPEC §3.9, docs/aof.md). */

export { type AofContext, type AofContextOptions, aofContext, runDirPath, taskDirPath, taskFilePath } from './context.ts'
export { type AofEvent, type EventFilter, appendEvent, readEvents } from './events.ts'
export { type LockOptions, withFileLock } from './file-lock.ts'
export { type HeartbeatLoop, type HeartbeatLoopOptions, startHeartbeat } from './heartbeat-loop.ts'
export { initDataDir } from './init.ts'
export { DEFAULT_HEARTBEAT_TTL_MS, DEFAULT_LEASE_TTL_MS, type LeaseOptions, type LeaseResult, acquireLease, heartbeat } from './lease.ts'
export { type LintProblem, lintDataDir } from './lint.ts'
export { type ParsedMessage, parseProtocolMessage } from './parse-message.ts'
export { type RouteOutcome } from './route-outcome.ts'
export { route, routeMessage } from './router.ts'
export {
  completeRunArtifact,
  markRunArtifactExpired,
  readHeartbeat,
  readRun,
  readRunResult,
  resultBelongsToRun,
  writeRunResult,
} from './run-artifacts.ts'
export { type PollOptions, type PollResult, checkStaleHeartbeats, poll } from './scheduler.ts'
export { handleSessionEnd } from './session-end.ts'
export { applyOutcomeLocked, resolveCompletionTransitions } from './completion-outcome.ts'
export { MAX_ENVELOPE_BYTES, MESSAGE_TYPES, type MessageType, type ProtocolEnvelope } from './schemas/envelope.ts'
export { OUTCOMES, type Outcome } from './schemas/payloads.ts'
export { TASK_STATUSES, TRANSITIONS, type TaskStatus, isTaskStatus, isValidTransition } from './status.ts'
export { type CreateTaskInput, createTask } from './task-create.ts'
export { type Task, taskLease, taskMetadata } from './task-file.ts'
export { isTaskId, newTaskId } from './task-id.ts'
export { type TaskListing, getTask, listTasks, withTaskLock } from './task-store.ts'
export { type TransitionOptions, transitionTask, updateTask } from './task-transition.ts'
export { appendWorkLog, workLogEntries } from './work-log.ts'
