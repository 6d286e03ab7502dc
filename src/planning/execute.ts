/**
 * `plan.execute`: runs a plan's subtasks on the worker pool in dependency order (scheduler.ts), records each
 * finished subtask in the store as it finishes (checkpoint.ts), and returns the plan with every status and
 * result, `subtask_results` (completed ones, in topological order), `plan_progress`, `replan_count` and `success`.
 * A plan already recorded for this run and node is resumed: completed subtasks keep their results and do not run,
 * and the result is the same, keys in the same order, as an uninterrupted execution's (`canonicalPlan`).
 */

import type { Action, ActionContext } from '../actions/types.ts'
import { sleep } from '../core/util.ts'
import { createPool, defaultConcurrency } from '../pool/pool.ts'
import type { Pool, PoolOptions } from '../pool/pool.ts'
import type { BatchPolicy } from './batching.ts'
import { headerRecord, planKey, restorePlan, subtaskRecord } from './checkpoint.ts'
import type { ExecuteParams } from './execute-params.ts'
import { executeParams } from './execute-params.ts'
import { canonicalPlan, readPlan } from './plan.ts'
import { replan } from './replan.ts'
import type { ScheduleOutcome } from './scheduler.ts'
import { schedule } from './scheduler.ts'
import { subtaskRunner } from './subtask-runner.ts'
import { countStatuses } from './types.ts'

/** Keys plan.execute owns in state; a subtask's own state updates never overwrite them. */
const PLAN_KEYS = ['plan', 'subtask_results', 'plan_progress', 'plan_status', 'replan_count', 'success', 'plan_error']

/** The longest timer delay Node keeps (ms, ~24.8 days); beyond it a timer fires at once. */
const PLAN_LONG = 2 ** 31 - 1

export interface ExecuteDeps {
  createPool?: (options: PoolOptions) => Pool
  sleep?: (ms: number) => Promise<void>
  batchPolicy?: BatchPolicy
}

export const executeAction: Action<ExecuteParams> = {
  name: 'plan.execute',
  // The executor's with: is rendered per subtask (subtask, dependency_results), never by the engine up front.
  raw: ['subtask_executor'],
  description: 'Run a plan: subtasks in dependency order, independent ones in parallel on worker threads, checkpointed one by one.',
  params: executeParams,
  run: (params, ctx) => execute(params, ctx),
}

export async function execute(params: ExecuteParams, ctx: ActionContext, deps: ExecuteDeps = {}): Promise<Record<string, unknown>> {
  let plan = readPlan(params.plan ?? ctx.state.plan)
  for (const s of plan.subtasks) if (s.status === 'in_progress') s.status = 'pending'
  // The revision the node received names the records: a crash resumes the same revision (replans made inside this
  // node rewrite its header in place), while a plan revised by plan.replan since is a new execution.
  const key = planKey(ctx.node, plan.id, plan.replan_count)
  const restored = await restorePlan(ctx.store, ctx.runId, ctx.node, plan.id, plan.replan_count)
  if (restored) plan = restored.plan
  else {
    // Subtasks that arrive finished (a plan run before, or revised by plan.replan) get their records too, first:
    // the header alone would bring them back as pending after a crash, to run again.
    const finished = plan.subtasks.filter((s) => s.status !== 'pending')
    await Promise.all(finished.map((s) => ctx.store.putSubtask(ctx.runId, key, s.id, subtaskRecord(s))))
    await ctx.store.putPlanHeader(ctx.runId, key, headerRecord(plan))
  }

  const concurrency = params.parallel ? (params.max_concurrent ?? defaultConcurrency()) : 1
  // The workers stay for the whole plan (it closes the pool at the end): one left idle while another slot waits on a
  // slow model must not exit and be started afresh, its JIT warm-up lost, for the next subtask.
  const pool = (deps.createPool ?? createPool)({ maxThreads: concurrency, idleTimeoutMs: PLAN_LONG })
  let current = plan
  try {
    const runner = subtaskRunner({ pool, ctx, executor: params.subtask_executor, timeout: params.timeout })
    const outcome = await schedule(
      plan,
      {
        concurrency,
        onFailure: params.on_subtask_failure,
        maxRetries: params.max_retries,
        retryDelayMs: params.retry_delay * 1000,
        backoffFactor: params.backoff_factor,
        onRetriesExhausted: params.on_retries_exhausted,
        baseState: omit(ctx.state, PLAN_KEYS),
        ...(restored ? { recordedUpdates: restored.updates, recordedCodes: restored.errorCodes } : {}),
        ...(deps.batchPolicy ? { batchPolicy: deps.batchPolicy } : {}),
      },
      {
        run: (s, input) => runner.run(current, s, input),
        runBatch: (members, events) => runner.runBatch(current, members, events),
        commit: (s, update, code) => ctx.store.putSubtask(ctx.runId, key, s.id, subtaskRecord(s, update, code)),
        emit(s, p, progress, extra) {
          const event = { type: 'subtask' as const, planId: p.id, id: s.id, status: s.status, description: s.description, progress }
          if (s.error !== undefined) Object.assign(event, { error: s.error })
          ctx.emit(extra ? { ...event, ...extra } : event)
        },
        async replan(p, failure) {
          const next = await replan(p, ctx, {
            failure,
            maxSubtasks: Math.max(15, p.subtasks.length),
            ...(params.max_replans !== undefined ? { maxReplans: params.max_replans } : {}),
          })
          // A new subtask may reuse the id of one it replaced; its old record must not mark it finished on resume.
          // Reset first, header second: a crash in between resumes the old plan with that subtask to run again.
          const old = new Map(p.subtasks.map((s) => [s.id, s.status]))
          for (const s of next.subtasks)
            if (s.status === 'pending' && old.has(s.id) && old.get(s.id) !== 'pending')
              await ctx.store.putSubtask(ctx.runId, key, s.id, { s: 0 })
          await ctx.store.putPlanHeader(ctx.runId, key, headerRecord(next))
          current = next
          ctx.emit({
            type: 'subtask',
            planId: next.id,
            id: failure.id,
            status: 'replanned',
            replan_count: next.replan_count,
            progress: countStatuses(next.subtasks),
          })
          return next
        },
        sleep: deps.sleep ?? ((ms) => sleep(ms, ctx.signal)),
      },
    )
    return result(outcome, ctx.state.plan_error !== undefined && ctx.state.plan_error !== null)
  } finally {
    await pool.close()
  }
}

/** `hadError`: state holds a plan_error from an earlier execution, which this one replaces or clears. */
function result(outcome: ScheduleOutcome, hadError: boolean): Record<string, unknown> {
  const { plan, order, updates, stopped } = outcome
  const byId = new Map(plan.subtasks.map((s) => [s.id, s]))
  const merged: Record<string, unknown> = {}
  const subtask_results: Record<string, unknown> = {}
  for (const id of order) {
    const s = byId.get(id)!
    if (s.status !== 'completed') continue
    subtask_results[id] = s.result
    const u = updates.get(id)
    if (u?.stateUpdate) Object.assign(merged, u.stateUpdate)
    // The engine merges updates shallowly, so a key the code deleted is cleared as null.
    for (const k of u?.removed ?? []) merged[k] = null
  }
  for (const k of PLAN_KEYS) delete merged[k]
  const plan_progress = countStatuses(plan.subtasks)
  const out: Record<string, unknown> = {
    ...merged,
    plan: canonicalPlan(plan),
    subtask_results,
    plan_progress,
    replan_count: plan.replan_count,
    success: plan_progress.completed === plan_progress.total,
  }
  // State merges shallowly, so only null clears a key.
  if (stopped) out.plan_error = stopped
  else if (hadError) out.plan_error = null
  return out
}

function omit(state: Readonly<Record<string, unknown>>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(state)) if (!keys.includes(k)) out[k] = v
  return out
}
