/**
 * The filesystem adapter of the task-store port: today's AOF/1 data dir, as docs/aof.md describes it. It adds
 * nothing of its own — each call is the existing operation under the task's file lock — so the folder protocol,
 * its crash repair and its tests stay where they are; the port only names what the NATS store must match.
 */

import type { TaskStore } from '../port.ts'
import { holdingTask } from '../shared.ts'
import type { AofContext } from './context.ts'
import { appendEvents, readEvents } from './event-log.ts'
import { fsFiles } from './files.ts'
import { readHandoffInputs } from './handoff-inputs.ts'
import { acquireLease, heartbeat } from './lease.ts'
import { readRun, readRunResult, setAsideRunResult } from './run-artifacts.ts'
import { createTask } from './task-create.ts'
import { getTask, listTasks, readTaskLocked, withTaskLock } from './task-store.ts'
import { moveTaskLocked, transitionTask, updateTask } from './task-transition.ts'

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
    // The scheduler's poll: a stale run whose result was written is applied rather than reclaimed (docs/aof.md).
    appendEvents: async (events) => appendEvents(ctx, events),
    readEvents: async (filter) => readEvents(ctx, filter),
    close: async () => {},
    ...fsFiles(ctx),

    handoffInputs: async (task) => readHandoffInputs(ctx, task),
    setAsideResult: (id, stale) =>
      withTaskLock(ctx, id, () => {
        const result = readRunResult(ctx, id)
        if (!result || readTaskLocked(ctx, id)?.status !== 'in-progress' || !stale(result, readRun(ctx, id))) return false
        setAsideRunResult(ctx, id)
        return true
      }),
  }
  return store
}
