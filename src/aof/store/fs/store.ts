/**
 * The filesystem adapter of the task-store port: today's AOF/1 data dir, as docs/aof.md describes it. It adds
 * nothing of its own — each call is the existing operation under the task's file lock — so the folder protocol,
 * its crash repair and its tests stay where they are; the port only names what the NATS store must match.
 */

import { type AofContext } from './context.ts'
import { appendEvents, readEvents } from '../../protocol/events.ts'
import { acquireLease, heartbeat } from './lease.ts'
import { readRun } from './run-artifacts.ts'
import { poll } from '../../roles/scheduler.ts'
import { handleSessionEnd } from './session-end.ts'
import { reportCompletion } from '../../roles/worker-report.ts'
import { readHandoffInputs } from '../../roles/worker-task-state.ts'
import type { ReclaimedLease, TaskStore } from '../port.ts'
import { createTask } from './task-create.ts'
import { getTask, listTasks, readTaskLocked, withTaskLock } from './task-store.ts'
import { moveTaskLocked, transitionTask, updateTask } from './task-transition.ts'
import { type Task, taskLease } from '../../protocol/task-file.ts'
import { fsFiles } from './files.ts'
import { TeaError } from '../../../core/errors.ts'

export function fsTaskStore(ctx: AofContext): TaskStore {
  const store: TaskStore = {
    kind: 'fs',
    where: ctx.dataDir,
    now: async () => ctx.now(),
    get: (id) => getTask(ctx, id),
    list: async (statuses) => listTasks(ctx, statuses),
    create: (input) => createTask(ctx, input),
    transition: (id, to, { leasedTo, ...options }) =>
      leasedTo === undefined
        ? transitionTask(ctx, id, to, options)
        : withTaskLock(ctx, id, () => moveTaskLocked(ctx, holdingTask(readTaskLocked(ctx, id), id, leasedTo), to, options)),
    update: (id, mutate) => updateTask(ctx, id, mutate),
    lease: (id, agent, options) => acquireLease(ctx, id, agent, options),
    heartbeat: (id, agent, options) => heartbeat(ctx, id, agent, options),
    readRun: async (id) => readRun(ctx, id),
    async reclaimExpired() {
      // The scheduler's poll: a stale run whose result was written is applied rather than reclaimed (docs/aof.md).
      const result = await poll(ctx)
      return result.actions
        .filter((a) => a.resolution === 'reclaimed')
        .map((a): ReclaimedLease => ({ taskId: a.taskId, agentId: a.agentId, ...(a.runId ? { runId: a.runId } : {}) }))
    },
    appendEvents: async (events) => appendEvents(ctx, events),
    readEvents: async (filter) => readEvents(ctx, filter),
    close: async () => {},
    ...fsFiles(ctx),

    handoffInputs: async (task) => readHandoffInputs(ctx, task),
    reportCompletion: (target, payload) => reportCompletion(ctx, store, target, payload),
    poll: (options) => poll(ctx, options),
    sessionEnd: () => handleSessionEnd(ctx),
  }
  return store
}

/** The task if `agent` holds its lease in progress; AOF_LOCKED (lost) otherwise. Shared by both adapters. */
export function holdingTask(task: Task | undefined, id: string, agent: string): Task {
  if (!task) throw new TeaError('AOF_NOT_FOUND', `task ${id} not found`)
  const lease = taskLease(task)
  if (task.status !== 'in-progress' || lease?.agent !== agent) {
    throw new TeaError('AOF_LOCKED', `${agent} no longer holds ${id} (status ${task.status}, lease ${lease?.agent ?? 'none'})`, {
      details: { lost: true },
    })
  }
  return task
}
