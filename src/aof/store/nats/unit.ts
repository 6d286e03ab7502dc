/**
 * One unit of work on a task (the port's `withTask`) on NATS: the unit's writes are compare-and-sets at the revision
 * it read (then at each revision it wrote); one lost race runs the whole unit again on a fresh read, so it decides on
 * what is there now.
 */

import { TeaError } from '../../../core/errors.ts'
import type { EventInput } from '../../protocol/events.ts'
import { type Task, nextStamp } from '../../protocol/task-file.ts'
import { moved, transitionEvent } from '../../protocol/transition.ts'
import type { TaskUnit } from '../port.ts'
import type { NatsContext } from './context.ts'
import { appendEvents } from './events.ts'
import { cas, read } from './task-entry.ts'

export async function withTask<T>(ctx: NatsContext, id: string, fn: (unit: TaskUnit | undefined) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const entry = await read(ctx, id)
    if (!entry) return fn(undefined)
    let { task, revision } = entry
    const write = async (next: Task, events: EventInput[], t: Date): Promise<Task> => {
      const rev = await cas(ctx, next, revision)
      if (rev === undefined) throw lostRace
      await appendEvents(ctx, events, t)
      task = next
      revision = rev
      return next
    }
    const unit: TaskUnit = {
      get task() {
        return task
      },
      async move(to, options) {
        if (task.status === to) return task
        const t = await ctx.bucket.now()
        return write(moved(task, to, t, options), [transitionEvent(task, to, options)], t)
      },
      async moves(path) {
        if (path.length === 0) return task
        const t = await ctx.bucket.now()
        let next = task
        const events: EventInput[] = []
        for (const { to, options } of path) {
          events.push(transitionEvent(next, to, options))
          next = moved(next, to, t, options)
        }
        return write(next, events, t)
      },
      async update(mutate) {
        const copy: Task = { ...task, data: structuredClone(task.data) }
        mutate(copy)
        const t = await ctx.bucket.now()
        copy.data.updatedAt = nextStamp(task, t)
        return write(copy, [], t)
      },
      peek: async (other) => (await read(ctx, other))?.task,
    }
    try {
      return await fn(unit)
    } catch (e) {
      if (e !== lostRace) throw e
      if (attempt >= 50) throw new TeaError('AOF_LOCKED', `task ${id} kept changing under this update (50 attempts); try again`)
    }
  }
}

/** Thrown inside a unit of work when its compare-and-set lost; `withTask` runs the unit again. */
const lostRace = new Error('lost a compare-and-set race')
