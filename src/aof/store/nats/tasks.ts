/**
 * The task entries' changes outside a lease (the port's `create`, `list`, `transition`, `update`, `putTask`): each a
 * compare-and-set on the revision read, re-read and decided again when another board wrote first.
 */

import { TeaError } from '../../../core/errors.ts'
import { type CreateTaskInput, newTaskFields } from '../../protocol/new-task.ts'
import { TASK_STATUSES, type TaskStatus } from '../../protocol/status.ts'
import { type Task, nextStamp, renderTask } from '../../protocol/task-file.ts'
import { isTaskId, newTaskId } from '../../protocol/task-id.ts'
import { type TransitionOptions, moved, transitionEvent } from '../../protocol/transition.ts'
import type { TaskListing, TaskStore } from '../port.ts'
import { compareStamps, holdingTask } from '../shared.ts'
import { isConflict } from './client.ts'
import type { NatsContext } from './context.ts'
import { checkedId, parseEntry, problemOf } from './entries.ts'
import { appendEvents } from './events.ts'
import { cas, mustRead, read } from './task-entry.ts'

export async function transition(
  ctx: NatsContext,
  id: string,
  to: TaskStatus,
  { leasedTo, ...options }: TransitionOptions & { leasedTo?: string },
): Promise<Task> {
  for (;;) {
    const { task, revision } = await mustRead(ctx, id)
    if (leasedTo !== undefined) holdingTask(task, id, leasedTo)
    if (task.status === to) return task
    const t = await ctx.bucket.now()
    const next = moved(task, to, t, options)
    if (!(await cas(ctx, next, revision))) continue
    await appendEvents(ctx, [transitionEvent(task, to, options)], t)
    return next
  }
}

export async function update(ctx: NatsContext, id: string, mutate: (task: Task) => void): Promise<Task> {
  for (;;) {
    const { task, revision } = await mustRead(ctx, id)
    const copy: Task = { ...task, data: structuredClone(task.data) }
    mutate(copy)
    copy.data.updatedAt = nextStamp(task, await ctx.bucket.now())
    if (await cas(ctx, copy, revision)) return copy
  }
}

export async function create(ctx: NatsContext, input: CreateTaskInput): Promise<Task> {
  if (input.title.trim() === '') throw new TeaError('AOF_INVALID', 'a task needs a non-empty title')
  if (input.id !== undefined && !isTaskId(input.id)) throw new TeaError('AOF_INVALID', `${JSON.stringify(input.id)} is not a task id`)
  if (input.parentId !== undefined && !(await read(ctx, input.parentId))) {
    throw new TeaError('AOF_NOT_FOUND', `parent task ${input.parentId} not found`)
  }
  for (let attempt = 0; attempt < 100; attempt++) {
    const t = await ctx.bucket.now()
    const id = input.id ?? newTaskId(t)
    const { status, data, body } = newTaskFields(input, id, t)
    const task: Task = { id, status, data, body, path: ctx.pathOf(id) }
    try {
      // kv.create fails when the key exists (and was not deleted): two boards never mint the same id.
      await ctx.tasks.create(id, await ctx.pack(renderTask(task)))
    } catch (e) {
      if (!isConflict(e)) throw e
      if (input.id !== undefined) throw new TeaError('AOF_INVALID', `task ${id} already exists`)
      continue
    }
    const payload = { title: data.title, status }
    await appendEvents(ctx, [{ type: 'task.created', actor: input.createdBy ?? 'tea', taskId: id, payload }], t)
    return task
  }
  throw new TeaError('INTERNAL', 'could not allocate a free task id after 100 attempts')
}

export async function list(ctx: NatsContext, statuses: readonly TaskStatus[] = TASK_STATUSES): Promise<TaskListing> {
  const out: TaskListing = { tasks: [], problems: [] }
  const keys: string[] = []
  for await (const k of await ctx.tasks.keys()) keys.push(k)
  keys.sort()
  // Read in parallel, 64 at a time: a worker lists before every claim, and 200 reads one after the other cost
  // ~250 ms on a loaded 2-core machine, against ~40 ms so.
  const read64 = (id: string) =>
    read(ctx, id).then(
      (e) => ({ id, e }),
      (err: unknown) => ({ id, err }),
    )
  for (let i = 0; i < keys.length; i += 64) {
    for (const r of await Promise.all(keys.slice(i, i + 64).map(read64))) {
      if ('err' in r) out.problems.push(problemOf(r.err, ctx.pathOf(r.id)))
      else if (r.e && statuses.includes(r.e.task.status)) out.tasks.push(r.e.task)
    }
  }
  return out
}

/** A task copied from another store (`tea aof copy`): written unless this one holds the same or a newer version. */
export async function putTask(ctx: NatsContext, task: Task): ReturnType<TaskStore['putTask']> {
  for (;;) {
    const e = await ctx.tasks.get(checkedId(task.id))
    let existing: Task | undefined
    if (e && e.operation === 'PUT') {
      try {
        existing = parseEntry(await ctx.unpack(e.value), task.id, ctx.pathOf(task.id))
      } catch {
        // An entry that is not a valid task is replaced by the valid one (it could not be read anyway).
      }
    }
    const verdict = e && e.operation === 'PUT' && !existing ? 'replaced' : compareStamps(existing, task)
    if (verdict === 'same' || verdict === 'kept') return verdict
    const value = await ctx.pack(renderTask(task))
    try {
      if (e && e.operation === 'PUT') await ctx.tasks.update(task.id, value, e.revision)
      else await ctx.tasks.create(task.id, value)
      return verdict
    } catch (err) {
      if (!isConflict(err)) throw err
    }
  }
}
