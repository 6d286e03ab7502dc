/**
 * Shared setup for the AOF-BDD scenario contract (bdd-contract.ts): tasks brought to a status, results and
 * heartbeats written, events read back — all through the task-store port, so one case runs unchanged on the
 * filesystem and on NATS JetStream. Times come from the store's clock (the server's on NATS, which a test cannot
 * set): a message is stamped just after "now", so it is never older than the run it speaks for, and a stale
 * heartbeat is one whose `expiresAt` lies before "now" rather than a clock moved forward.
 */

import type { Test } from 'uvu'
import { writeRunResultOn } from '../../../src/aof/roles/run-files.ts'
import type { RunHeartbeat, RunResult } from '../../../src/aof/protocol/schemas/run.ts'
import type { Outcome } from '../../../src/aof/protocol/schemas/payloads.ts'
import type { TaskStatus } from '../../../src/aof/protocol/status.ts'
import type { TaskStore } from '../../../src/aof/store/port.ts'
import type { Task } from '../../../src/aof/protocol/task-file.ts'
import { isTeaError } from '../../../src/core/errors.ts'
import { MOVES_FROM_READY } from '../helpers.ts'
import type { StoreHandle } from './store-contract.ts'

/** The uvu suite every case file adds its tests to. */
export type BddSuite = Test<{ h: StoreHandle }>

export const AGENT = 'swe-backend'
/** A fourth task id (helpers.ts has T1–T3 and MISSING). */
export const T4 = 'TASK-2026-02-09-004'

export interface Given {
  status?: TaskStatus
  agent?: string
  metadata?: Record<string, unknown>
  body?: string
}

/**
 * Task `id` brought to `status` (default in-progress) through allowed transitions, as the BDD "Given a task in
 * status …" reads: created ready and routed to `agent`; an in-progress one holds `agent`'s lease and run, and so
 * does one that went through in-progress on its way (review, done).
 */
export async function given(store: TaskStore, id: string, opts: Given = {}): Promise<Task> {
  const agent = opts.agent ?? AGENT
  let task = await store.create({
    id,
    title: `task ${id}`,
    status: 'ready',
    agent,
    ...(opts.metadata ? { metadata: opts.metadata } : {}),
    ...(opts.body !== undefined ? { body: opts.body } : {}),
  })
  if (opts.status === 'backlog') throw new Error('given: a backlog task is created with store.create')
  for (const step of MOVES_FROM_READY[opts.status ?? 'in-progress']) {
    if (step === 'in-progress') task = (await store.lease(id, agent)).task
    else task = await store.transition(id, step, { actor: 'test' })
  }
  return task
}

/** `sentAt` for a message sent now by the store's clock (1 ms on, so never before a run started this millisecond). */
export async function sent(store: TaskStore, laterMs = 1): Promise<{ sentAt: string }> {
  return { sentAt: new Date((await store.now()).getTime() + laterMs).toISOString() }
}

/** The payloads of the events of `type` (for task `taskId`), in the order they were logged. */
export async function eventsOf(store: TaskStore, type: string, taskId?: string): Promise<Array<Record<string, unknown>>> {
  return (await store.readEvents({ type, ...(taskId ? { taskId } : {}) })).map((e) => e.payload)
}

/** The task's moves as `from->to`, in order. */
export async function movesOf(store: TaskStore, id: string): Promise<string[]> {
  return (await eventsOf(store, 'task.transitioned', id)).map((p) => `${p.from}->${p.to}`)
}

export async function lastMove(store: TaskStore, id: string): Promise<Record<string, unknown> | undefined> {
  return (await eventsOf(store, 'task.transitioned', id)).at(-1)
}

export async function statusOf(store: TaskStore, id: string): Promise<TaskStatus | undefined> {
  return (await store.get(id))?.status
}

/** A result of the task's current run (as an agent that wrote it and died before moving the task leaves it). */
export async function resultOfRun(store: TaskStore, id: string, outcome: Outcome, extra: Partial<RunResult> = {}): Promise<RunResult> {
  const run = await store.readRun(id)
  if (!run?.runId) throw new Error(`resultOfRun: ${id} has no run`)
  const result: RunResult = {
    taskId: id,
    agentId: run.agentId,
    runId: run.runId,
    completedAt: (await store.now()).toISOString(),
    outcome,
    deliverables: [],
    blockers: outcome === 'blocked' ? ['Dependency not ready'] : [],
    ...extra,
  }
  await writeRunResultOn(store, result)
  return result
}

/**
 * The current run's heartbeat rewritten as the BDD states it: `expiresAt` `expiresInMs` from now by the store's
 * clock (negative: already expired), last beat five minutes before that. `expiresAt: null` leaves the field out.
 */
export async function heartbeatAt(store: TaskStore, id: string, expiresInMs: number | null, lastBeatAgoMs = 600_000): Promise<void> {
  const run = await store.readRun(id)
  if (!run) throw new Error(`heartbeatAt: ${id} has no run`)
  const now = (await store.now()).getTime()
  const hb: RunHeartbeat = {
    taskId: id,
    agentId: run.agentId,
    ...(run.runId ? { runId: run.runId } : {}),
    lastHeartbeat: new Date(now - lastBeatAgoMs).toISOString(),
    beatCount: 3,
    ...(expiresInMs === null ? {} : { expiresAt: new Date(now + expiresInMs).toISOString() }),
  }
  await store.writeRunFile(id, 'run_heartbeat.json', JSON.stringify(hb, null, 2))
}

/** An in-progress task whose heartbeat expired five minutes ago, with its run's result when `outcome` is given. */
export async function staleTask(store: TaskStore, id: string, outcome?: Outcome, metadata?: Record<string, unknown>): Promise<void> {
  await given(store, id, metadata ? { metadata } : {})
  if (outcome) await resultOfRun(store, id, outcome)
  await heartbeatAt(store, id, -300_000)
}

/** Waits until the store's clock is past `iso` (short TTLs expire by the store's own time, never a fixed sleep). */
export async function untilPast(store: TaskStore, iso: string): Promise<void> {
  const at = Date.parse(iso)
  while ((await store.now()).getTime() <= at) await new Promise((r) => setTimeout(r, 5))
}

export async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p
  } catch (e) {
    return isTeaError(e) ? e.code : `untyped: ${String(e)}`
  }
  return 'no error'
}

export const text = (b: Uint8Array | undefined): string | undefined => (b ? Buffer.from(b).toString('utf8') : undefined)

/** A message with an `id` of its own: the same content delivered again as a new message (a re-delivery). */
export const withId = (msg: Record<string, unknown>, id: string): Record<string, unknown> => ({ ...msg, id })
