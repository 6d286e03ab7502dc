/**
 * The JetStream store's task entries and names (store.ts has the layout): task ids checked before they become keys,
 * routed-message keys, subject tokens; entries parsed as the filesystem parses task files (a bad one is a problem at
 * its key, as `aof lint` reports a bad file), leased as task files are; and events published again while
 * the server is away. Pure functions, but for `publishOnce`'s retry.
 */

import { createHash } from 'node:crypto'
import { TeaError, errorIssue } from '../../../core/errors.ts'
import type { Issue } from '../../../core/issues.ts'
import { parseFrontmatter } from '../../protocol/frontmatter.ts'
import type { Lease } from '../../protocol/schemas/task.ts'
import { TASK_STATUSES, isTaskStatus } from '../../protocol/status.ts'
import { type Task, nextStamp, parseTaskText } from '../../protocol/task-file.ts'
import { isTaskId } from '../../protocol/task-id.ts'

export function checkedId(id: string): string {
  if (!isTaskId(id)) throw new TeaError('AOF_INVALID', `expected a task id like TASK-2026-02-09-Ab3dEf7h, received ${JSON.stringify(id)}`)
  return id
}

/** The key in `p_runs` that notes a routed message (message ids may hold `:`, which a key may not). */
export function routedKey(messageId: string): string {
  return `_routed.${createHash('sha256').update(messageId).digest('hex')}`
}

/** An event or message type as subject tokens (`task.transitioned` is two; `*`, `>` and spaces are not allowed). */
export function subjectToken(type: string): string {
  return type.replace(/[^A-Za-z0-9_.-]/g, '_')
}

export function parseEntry(text: string, id: string, path: string): Task {
  const status = parseFrontmatter(text, path).data.status
  if (!isTaskStatus(status)) {
    const message = `expected a task whose status is one of ${TASK_STATUSES.join(', ')}, received ${JSON.stringify(status ?? null)}`
    throw new TeaError('AOF_INVALID', message, { where: { file: path } })
  }
  return parseTaskText(text, path, status, id)
}

export function problemOf(e: unknown, path: string): Issue & { where: { file: string } } {
  const issue = errorIssue(e)
  return { ...issue, where: { ...issue.where, file: path } }
}

/**
 * Publishes one event, again while the server is away (up to 30 s): the move it records has already been written, and
 * a publish that timed out may have been stored, so the retry carries the same `Nats-Msg-Id` and the stream's
 * duplicate window drops the second copy. Only after that is the event given up (the move stands; lint reports
 * the gap, docs/fleet.md).
 */
export async function publishOnce(publish: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + 30_000
  for (;;) {
    try {
      await publish()
      return
    } catch (e) {
      if (Date.now() >= deadline) throw e
      await new Promise((r) => setTimeout(r, 500))
    }
  }
}

/** `task` holding lease `l`, stamped at `t`. */
export function withLease(task: Task, l: Lease, t: Date): Task {
  return { ...task, data: { ...task.data, lease: l, updatedAt: nextStamp(task, t) } }
}
