/** Running plan.execute in tests: params through the real schema, a memory store, real worker threads. */

import * as v from 'valibot'
import type { RunEvent } from '../../src/core/events.ts'
import { execute } from '../../src/planning/execute.ts'
import type { ExecuteDeps } from '../../src/planning/execute.ts'
import { executeParams } from '../../src/planning/execute-params.ts'
import type { Plan, PlanProgress } from '../../src/planning/types.ts'
import type { ActionStore } from '../../src/actions/types.ts'
import type { Store } from '../../src/store/types.ts'
import { planningContext, scriptedLlm } from './helpers.ts'
import type { ScriptedLlm } from './helpers.ts'

export interface ExecuteResult {
  out: Record<string, unknown> & { plan: Plan; subtask_results: Record<string, unknown>; plan_progress: PlanProgress; success: boolean }
  events: Array<Extract<RunEvent, { type: 'subtask' }>>
  store: ActionStore
  llm: ScriptedLlm
}

export interface ExecuteOptions {
  state?: Record<string, unknown>
  store?: Store
  llm?: ScriptedLlm
  deps?: ExecuteDeps
  runId?: string
}

export async function runExecute(params: Record<string, unknown>, o: ExecuteOptions = {}): Promise<ExecuteResult> {
  const llm = o.llm ?? scriptedLlm([])
  const ctx = planningContext(llm, { state: o.state ?? {}, ...(o.store ? { store: o.store } : {}), ...(o.runId ? { runId: o.runId } : {}) })
  try {
    const out = (await execute(v.parse(executeParams, params), ctx, o.deps)) as ExecuteResult['out']
    const events = ctx.events.filter((e): e is Extract<RunEvent, { type: 'subtask' }> => e.type === 'subtask')
    return { out, events, store: ctx.store, llm }
  } finally {
    ctx.cleanup()
  }
}

export function statuses(p: Plan): Record<string, string> {
  return Object.fromEntries(p.subtasks.map((s) => [s.id, s.status]))
}
