/**
 * A new task's frontmatter and body, the same on every store: field order and defaults as the reference writes
 * them, so its tools read our tasks unchanged.
 */

import type { TaskStatus } from './status.ts'
import { contentHash } from './task-file.ts'

export interface CreateTaskInput {
  title: string
  body?: string
  agent?: string
  status?: Extract<TaskStatus, 'backlog' | 'ready'>
  parentId?: string
  priority?: 'critical' | 'high' | 'normal' | 'low'
  metadata?: Record<string, unknown>
  createdBy?: string
  dependsOn?: string[]
  /** A fixed id (imports, tests); refused when it exists. Normally omitted: a fresh id is drawn. */
  id?: string
}

/** The frontmatter and body of a new task (no I/O): the same for every store (docs/fleet.md). */
export function newTaskFields(
  input: CreateTaskInput,
  id: string,
  now: Date,
): { status: TaskStatus; data: Record<string, unknown>; body: string } {
  const stamp = now.toISOString()
  const body = (input.body ?? '').trim()
  const status = input.status ?? 'backlog'
  // Field order and defaults as the reference writes them, so its tools read our files unchanged.
  const data: Record<string, unknown> = {
    schemaVersion: 1,
    id,
    title: input.title.trim(),
    status,
    priority: input.priority ?? 'normal',
    routing: { ...(input.agent ? { agent: input.agent } : {}), tags: [] },
    createdAt: stamp,
    updatedAt: stamp,
    lastTransitionAt: stamp,
    createdBy: input.createdBy ?? 'tea',
    ...(input.parentId ? { parentId: input.parentId } : {}),
    dependsOn: input.dependsOn ?? [],
    contentHash: contentHash(body),
    metadata: input.metadata ?? {},
  }
  return { status, data, body }
}
