/**
 * One task file: `tasks/<status>/<TASK-ID>.md`, YAML frontmatter + Markdown body. `data` holds the whole
 * frontmatter, unknown keys included, in its original key order; we change only what an operation changes. The
 * folder is the truth for `status` (a transition moves the file atomically; the frontmatter is rewritten with it),
 * and `lint` reports a file whose frontmatter disagrees.
 */

import { createHash } from 'node:crypto'
import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { toIssues } from '../../core/issues.ts'
import { isPlainObject } from '../../core/util.ts'
import { parseFrontmatter, stringifyFrontmatter } from './frontmatter.ts'
import { type Lease, LeaseSchema, TaskFrontmatterSchema } from './schemas/task.ts'
import type { TaskStatus } from './status.ts'

export interface Task {
  id: string
  /** The folder the file was found in. */
  status: TaskStatus
  data: Record<string, unknown>
  body: string
  path: string
}

export function parseTaskText(text: string, path: string, folderStatus: TaskStatus, expectedId: string): Task {
  const { data, body } = parseFrontmatter(text, path)
  const r = v.safeParse(TaskFrontmatterSchema, data)
  if (!r.success) {
    throw new TeaError('AOF_INVALID', 'invalid task frontmatter', { where: { file: path }, issues: toIssues(r.issues) })
  }
  if (data.id !== expectedId) {
    const message = `frontmatter id ${JSON.stringify(data.id)} does not match the file name ${expectedId}`
    throw new TeaError('AOF_INVALID', message, { where: { file: path } })
  }
  return { id: expectedId, status: folderStatus, data, body, path }
}

/** The file text of `task`; `contentHash` is always that of the body as written (another writer's stale one too). */
export function renderTask(task: Task): string {
  return stringifyFrontmatter({ ...task.data, status: task.status, contentHash: contentHash(task.body) }, task.body)
}

/** First 16 hex characters of the body's SHA-256, as the reference computes `contentHash`. */
export function contentHash(body: string): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 16)
}

export function taskMetadata(task: Task): Record<string, unknown> {
  return isPlainObject(task.data.metadata) ? task.data.metadata : {}
}

export function taskLease(task: Task): Lease | undefined {
  const r = v.safeParse(LeaseSchema, task.data.lease)
  return r.success ? r.output : undefined
}

export function routedAgent(task: Task): string | undefined {
  const routing = task.data.routing
  return isPlainObject(routing) && typeof routing.agent === 'string' && routing.agent !== '' ? routing.agent : undefined
}

export function taskTitle(task: Task): string {
  return typeof task.data.title === 'string' ? task.data.title : ''
}

/**
 * A timestamp strictly after the task's last update. Crash recovery picks the newest of two copies by
 * `updatedAt`, so every rewrite must move it forward even when the clock (or `--now`) does not.
 */
export function nextStamp(task: Task, now: Date): string {
  const prev = Date.parse(String(task.data.updatedAt ?? ''))
  const t = Number.isNaN(prev) || now.getTime() > prev ? now.getTime() : prev + 1
  return new Date(t).toISOString()
}
