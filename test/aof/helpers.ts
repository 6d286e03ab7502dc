/** Shared fixtures for the AOF tests: a temp data dir with a settable clock, envelopes, tasks in a given state. */

import { rmSync } from 'node:fs'
import { type AofContext, type Task, acquireLease, aofContext, createTask, readEvents, transitionTask } from '../../src/aof/index.ts'
import type { TaskStatus } from '../../src/aof/index.ts'
import { tempDir } from '../support/temp-dir.ts'

export interface Fixture {
  ctx: AofContext
  dir: string
  setNow(iso: string): void
  advance(ms: number): void
  cleanup(): void
}

export function fixture(start = '2026-02-10T10:00:00.000Z'): Fixture {
  const dir = tempDir('tea-aof-')
  let t = Date.parse(start)
  const ctx = aofContext(dir, { now: () => new Date(t), lock: { timeoutMs: 5_000 } })
  return {
    ctx,
    dir,
    setNow: (iso) => void (t = Date.parse(iso)),
    advance: (ms) => void (t += ms),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  }
}

export const T1 = 'TASK-2026-02-09-001'
export const T2 = 'TASK-2026-02-09-002'
export const T3 = 'TASK-2026-02-09-003'
export const MISSING = 'TASK-2026-02-09-999'

/** The valid moves that bring a ready task to each status (a lease for in-progress). */
export const MOVES_FROM_READY: Record<TaskStatus, TaskStatus[]> = {
  backlog: [],
  ready: [],
  'in-progress': ['in-progress'],
  blocked: ['blocked'],
  review: ['in-progress', 'review'],
  done: ['in-progress', 'review', 'done'],
  cancelled: ['cancelled'],
  deadletter: ['deadletter'],
}

export interface MakeTask {
  id?: string
  status?: TaskStatus
  agent?: string
  metadata?: Record<string, unknown>
  body?: string
}

/** A task brought to `status` through valid transitions; in-progress ones hold a lease (and a run) of `agent`. */
export async function makeTask(ctx: AofContext, opts: MakeTask = {}): Promise<Task> {
  const agent = opts.agent ?? 'swe-backend'
  const task = await createTask(ctx, {
    title: `task ${opts.id ?? ''}`.trim(),
    status: 'ready',
    agent,
    ...(opts.id ? { id: opts.id } : {}),
    ...(opts.metadata ? { metadata: opts.metadata } : {}),
    ...(opts.body ? { body: opts.body } : {}),
  })
  const target = opts.status ?? 'in-progress'
  if (target === 'backlog') throw new Error('makeTask: create backlog tasks with createTask')
  let current = task
  for (const step of MOVES_FROM_READY[target]) {
    if (step === 'in-progress') current = (await acquireLease(ctx, task.id, agent)).task
    else current = await transitionTask(ctx, task.id, step, { actor: 'test' })
  }
  return current
}

export function envelope(type: string, taskId: string, payload: unknown, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    protocol: 'aof',
    version: 1,
    type,
    taskId,
    fromAgent: 'swe-backend',
    toAgent: 'orchestrator',
    sentAt: '2026-02-10T10:00:30.000Z',
    payload,
    ...over,
  }
}

export function completion(
  taskId: string,
  payload: Record<string, unknown> = {},
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return envelope(
    'completion.report',
    taskId,
    {
      outcome: 'done',
      summaryRef: 'outputs/summary.md',
      tests: { total: 10, passed: 8, failed: 2 },
      notes: 'finished',
      ...payload,
    },
    over,
  )
}

export function statusUpdate(
  taskId: string,
  payload: Record<string, unknown> = {},
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return envelope('status.update', taskId, { taskId, agentId: 'swe-backend', ...payload }, over)
}

export function handoff(
  childId: string,
  parentId: string,
  payload: Record<string, unknown> = {},
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return envelope(
    'handoff.request',
    childId,
    {
      taskId: childId,
      parentTaskId: parentId,
      fromAgent: 'swe-backend',
      toAgent: 'swe-qa',
      dueBy: '2026-02-11T12:00:00.000Z',
      ...payload,
    },
    over,
  )
}

export function eventTypes(ctx: AofContext, taskId?: string): string[] {
  return readEvents(ctx, taskId ? { taskId } : {}).map((e) => e.type)
}

export function eventsOf(ctx: AofContext, type: string, taskId?: string): Array<Record<string, unknown>> {
  return readEvents(ctx, { type, ...(taskId ? { taskId } : {}) }).map((e) => e.payload)
}

/** Wraps a test body: a fresh fixture per test, cleaned up even when the test fails. */
export function withFixture(fn: (f: Fixture) => Promise<void>): () => Promise<void> {
  return async () => {
    const f = fixture()
    try {
      await fn(f)
    } finally {
      f.cleanup()
    }
  }
}
