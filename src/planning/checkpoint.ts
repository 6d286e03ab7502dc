/**
 * Plan checkpoints in the store (SPEC §3.6). Format: one header per plan execution, keyed `<node>/<plan id>`
 * under the run (`<node>/<plan id>@<revision>` for a plan that has been replanned before the node ran it: a revised
 * plan is a new execution, not a resume of the old one's records), holding the plan's structure (ids,
 * descriptions, dependencies — everything but statuses, results, errors and attempts), rewritten only when a
 * replan changes the structure; and one small record per finished subtask, written when it finishes and never
 * again:
 *
 *   header  {v: 1, plan: {id, goal, strategy, model?, replan_count, max_replans, created_at, rationale?, subtasks:
 *            [{id, description, dependencies, parent?, timeout?}]}} (and any other key a hand-written plan has)
 *   subtask {s: status code, r?: result, e?: error, c?: error code, a?: attempts, u?: state update,
 *            x?: removed state keys}
 *
 * Status codes are small integers (2 completed, 3 failed, 4 skipped) so a record costs a few bytes beyond its
 * result. On resume, completed subtasks come back with their results and are never run again; in-flight ones
 * have no record and run again.
 */

import type { ActionStore } from '../actions/types.ts'
import { TeaError } from '../core/errors.ts'
import type { Plan, Subtask, SubtaskOutput, SubtaskStatus } from './types.ts'

const CODES: Record<SubtaskStatus, number> = { pending: 0, in_progress: 1, completed: 2, failed: 3, skipped: 4 }
const STATUSES: SubtaskStatus[] = ['pending', 'in_progress', 'completed', 'failed', 'skipped']

/** `revision` is the plan's `replan_count` when the node received it; a replan inside the node keeps the key. */
export function planKey(node: string, planId: string, revision = 0): string {
  return revision === 0 ? `${node}/${planId}` : `${node}/${planId}@${revision}`
}

export function headerRecord(plan: Plan): Record<string, unknown> {
  const { subtasks, ...rest } = plan
  return {
    v: 1,
    plan: {
      ...rest,
      subtasks: subtasks.map(({ status: _s, result: _r, error: _e, attempts: _a, ...shape }) => shape),
    },
  }
}

export function subtaskRecord(s: Subtask, update?: SubtaskOutput, errorCode?: string): Record<string, unknown> {
  const r: Record<string, unknown> = { s: CODES[s.status] }
  if (s.result !== undefined) r.r = s.result
  if (s.error !== undefined) r.e = s.error
  if (errorCode !== undefined) r.c = errorCode
  if (s.attempts !== undefined && s.attempts !== 1) r.a = s.attempts
  if (update?.stateUpdate) r.u = update.stateUpdate
  if (update?.removed) r.x = update.removed
  return r
}

export interface Restored {
  plan: Plan
  updates: Map<string, SubtaskOutput>
  /** Error codes of recorded failures, so a resumed run reports them as the first run did. */
  errorCodes: Map<string, string>
}

/**
 * The plan as recorded for this run and node, with every recorded subtask's status and result, or undefined when
 * nothing was recorded. A record that does not have the shape above is CHECKPOINT_CORRUPT naming the run.
 */
export async function restorePlan(
  store: ActionStore,
  runId: string,
  node: string,
  planId: string,
  revision = 0,
): Promise<Restored | undefined> {
  const found = await store.getPlan(runId, planKey(node, planId, revision))
  if (!found) return undefined
  const corrupt = (what: string) =>
    new TeaError('CHECKPOINT_CORRUPT', `run ${runId}: the plan checkpoint of node ${node} (${planId}) is corrupt: ${what}`, {
      details: { runId, node, planId },
      hint: `delete the run with 'tea runs prune' or start a new run`,
    })
  const header = found.header as { v?: unknown; plan?: Plan }
  if (header.v !== 1 || typeof header.plan !== 'object' || header.plan === null || !Array.isArray(header.plan.subtasks))
    throw corrupt('the header has no plan')
  const updates = new Map<string, SubtaskOutput>()
  const errorCodes = new Map<string, string>()
  const subtasks: Subtask[] = header.plan.subtasks.map((shape) => {
    if (typeof shape?.id !== 'string' || typeof shape.description !== 'string' || !Array.isArray(shape.dependencies))
      throw corrupt(`a subtask shape is malformed (${JSON.stringify(shape).slice(0, 80)})`)
    const s: Subtask = { ...shape, status: 'pending' }
    const rec = found.subtasks.get(shape.id)
    if (!rec) return s
    const status = typeof rec.s === 'number' ? STATUSES[rec.s] : undefined
    if (!status) throw corrupt(`subtask ${shape.id} has no valid status`)
    // An in-flight record (older writers) means "not finished": run it again.
    if (status === 'in_progress' || status === 'pending') return s
    s.status = status
    if ('r' in rec) s.result = rec.r
    if (typeof rec.e === 'string') s.error = rec.e
    if (typeof rec.c === 'string') errorCodes.set(s.id, rec.c)
    s.attempts = typeof rec.a === 'number' ? rec.a : 1
    if (status === 'completed' && (rec.u !== undefined || rec.x !== undefined)) {
      const u: SubtaskOutput = { value: s.result }
      if (rec.u !== undefined) u.stateUpdate = rec.u as Record<string, unknown>
      if (Array.isArray(rec.x)) u.removed = rec.x as string[]
      updates.set(s.id, u)
    }
    return s
  })
  return { plan: { ...header.plan, subtasks }, updates, errorCodes }
}
