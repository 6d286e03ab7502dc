/**
 * A task's entry in `<p>_tasks`: read (parsed once a revision), and written by compare-and-set on the revision it
 * was decided on — the commit point of every change to a task on NATS.
 */

import { TeaError } from '../../../core/errors.ts'
import { type Task, renderTask } from '../../protocol/task-file.ts'
import { isTaskId } from '../../protocol/task-id.ts'
import { isConflict } from './client.ts'
import type { Entry, NatsContext } from './context.ts'
import { parseEntry } from './entries.ts'

/** The task and its revision; AOF_INVALID (at its key) when the entry is not a valid task. */
export async function read(ctx: NatsContext, id: string): Promise<Entry | undefined> {
  if (!isTaskId(id)) throw new TeaError('AOF_INVALID', `expected a task id like TASK-2026-02-09-Ab3dEf7h, received ${JSON.stringify(id)}`)
  const e = await ctx.tasks.get(id)
  if (!e || e.operation !== 'PUT') return undefined
  // A revision is never reused, so its parse can be: a worker lists every task before each claim, and parsing the
  // YAML of 200 unchanged entries was half the cost of the listing. Callers never mutate a task they read (every
  // change builds a new one), so the cached object is shared.
  const known = ctx.parsed.get(id)
  if (known?.revision === e.revision) return known
  const entry = { task: parseEntry(await ctx.unpack(e.value), id, ctx.pathOf(id)), revision: e.revision }
  ctx.parsed.set(id, entry)
  return entry
}

export async function mustRead(ctx: NatsContext, id: string): Promise<Entry> {
  const e = await read(ctx, id)
  if (!e) throw new TeaError('AOF_NOT_FOUND', `task ${id} not found on ${ctx.where}`)
  return e
}

/** Writes `task` if its entry is still at `revision`: the new revision, or undefined when someone else wrote first. */
export async function cas(ctx: NatsContext, task: Task, revision: number): Promise<number | undefined> {
  try {
    return await ctx.tasks.update(task.id, await ctx.pack(renderTask(task)), revision)
  } catch (e) {
    if (isConflict(e)) return undefined
    throw e
  }
}
