/**
 * Creating a task. The new id is drawn at random (the reference's current 8-character form) and claimed under its
 * own file lock after checking every status folder, so two processes can never mint the same id, even across
 * folders; a clash (astronomically rare) draws again.
 */

import { TeaError } from '../../../core/errors.ts'
import { type AofContext, taskFilePath } from './context.ts'
import { type CreateTaskInput, newTaskFields } from '../../protocol/new-task.ts'
import { appendEvent } from './event-log.ts'
import { writeFileAtomic } from './fs-atomic.ts'
import type { TaskStatus } from '../../protocol/status.ts'
import { type Task, contentHash, renderTask } from '../../protocol/task-file.ts'
import { isTaskId, newTaskId } from '../../protocol/task-id.ts'
import { ensureTaskDirs, getTask, readTaskLocked, withTaskLock } from './task-store.ts'

export async function createTask(ctx: AofContext, input: CreateTaskInput): Promise<Task> {
  if (input.title.trim() === '') throw new TeaError('AOF_INVALID', 'a task needs a non-empty title')
  if (input.parentId !== undefined) {
    if (!isTaskId(input.parentId)) throw new TeaError('AOF_INVALID', `parent id ${JSON.stringify(input.parentId)} is not a task id`)
    if (!(await getTask(ctx, input.parentId))) throw new TeaError('AOF_NOT_FOUND', `parent task ${input.parentId} not found`)
  }
  if (input.id !== undefined && !isTaskId(input.id)) throw new TeaError('AOF_INVALID', `${JSON.stringify(input.id)} is not a task id`)
  for (let attempt = 0; attempt < 100; attempt++) {
    const now = ctx.now()
    const id = input.id ?? newTaskId(now)
    const task = await withTaskLock(ctx, id, () => {
      if (readTaskLocked(ctx, id)) {
        if (input.id !== undefined) throw new TeaError('AOF_INVALID', `task ${id} already exists`)
        return undefined
      }
      const { status, data, body } = newTaskFields(input, id, now)
      const created: Task = { id, status, data, body, path: taskFilePath(ctx, status, id) }
      writeFileAtomic(created.path, renderTask(created))
      ensureTaskDirs(ctx, status, id)
      return created
    })
    if (task) {
      appendEvent(ctx, {
        type: 'task.created',
        actor: input.createdBy ?? 'tea',
        taskId: task.id,
        payload: { title: task.data.title, status: task.status },
      })
      return task
    }
  }
  throw new TeaError('INTERNAL', 'could not allocate a free task id after 100 attempts')
}
