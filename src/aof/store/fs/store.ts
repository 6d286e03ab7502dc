/**
 * The filesystem adapter of the task-store port: today's AOF/1 data dir, as docs/aof.md describes it. It adds
 * nothing of its own — each call is the existing operation under the task's file lock — so the folder protocol,
 * its crash repair and its tests stay where they are; the port only names what the NATS store must match.
 */

import type { ReclaimedLease, TaskStore } from '../port.ts'
import { holdingTask } from '../shared.ts'
import type { AofContext } from './context.ts'
import { appendEvents, readEvents } from './event-log.ts'
import { fsFiles } from './files.ts'
import { readHandoffInputs } from './handoff-inputs.ts'
import { acquireLease, heartbeat } from './lease.ts'
import { readRun } from './run-artifacts.ts'
import { poll } from './scheduler.ts'
import { createTask } from './task-create.ts'
import { getTask, listTasks, readTaskLocked, withTaskLock } from './task-store.ts'
import { moveTaskLocked, transitionTask, updateTask } from './task-transition.ts'

export function fsTaskStore(ctx: AofContext): TaskStore {
  return {
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
    poll: (options) => poll(ctx, options),
  }
}
