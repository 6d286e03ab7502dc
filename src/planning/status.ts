/**
 * `plan.status`: counts per status in one pass over the subtasks, the share finished (completed or skipped), an
 * optional list of subtasks (without the completed ones when `include_completed: false`; with description,
 * dependencies, result and error when `include_details: true`), and with `format: mermaid` a picture of the DAG.
 */

import * as v from 'valibot'
import type { Action } from '../actions/types.ts'
import { planToMermaid } from './mermaid.ts'
import { planShape } from './plan.ts'
import type { Plan, PlanProgress } from './types.ts'

export const statusParams = v.object({
  plan: v.optional(v.pipe(v.unknown(), v.description('The plan; default state.plan.'))),
  include_completed: v.optional(v.pipe(v.boolean(), v.description('List completed subtasks too (default true).')), true),
  include_details: v.optional(
    v.pipe(v.boolean(), v.description('Add description, dependencies, result and error to each listed subtask (default false).')),
    false,
  ),
  format: v.optional(
    v.pipe(v.picklist(['json', 'mermaid']), v.description('`mermaid` adds `mermaid`: the DAG as a flowchart coloured by status.')),
    'json',
  ),
})

export type StatusParams = v.InferOutput<typeof statusParams>

export interface PlanStatus extends PlanProgress {
  plan_id: string | null
  goal: string
  /** (completed + skipped) / total; 0 for an empty plan. */
  progress: number
  success: boolean
  subtasks: Array<Record<string, unknown>>
  mermaid?: string
}

export const statusAction: Action<StatusParams> = {
  name: 'plan.status',
  description: 'Counts of a plan by status, its progress, a list of subtasks, and optionally a Mermaid diagram.',
  params: statusParams,
  run(params, ctx) {
    const raw = params.plan ?? ctx.state.plan
    // An absent or empty plan is a status of zeros, not an error: status is asked when nothing may have run yet.
    const parsed = v.safeParse(planShape, raw ?? { subtasks: [] })
    const plan = (parsed.success ? parsed.output : { subtasks: [] }) as Partial<Plan> & Pick<Plan, 'subtasks'>
    return { plan_status: planStatus(plan, params) }
  },
}

export function planStatus(plan: Partial<Plan> & Pick<Plan, 'subtasks'>, opts: Omit<StatusParams, 'plan'>): PlanStatus {
  const counts: PlanProgress = { completed: 0, failed: 0, skipped: 0, pending: 0, in_progress: 0, total: 0 }
  const listed: Array<Record<string, unknown>> = []
  for (const s of plan.subtasks) {
    counts[s.status]++
    counts.total++
    if (!opts.include_completed && s.status === 'completed') continue
    const item: Record<string, unknown> = { id: s.id, status: s.status }
    if (opts.include_details) {
      item.description = s.description
      item.dependencies = s.dependencies
      if (s.result !== undefined) item.result = s.result
      if (s.error !== undefined) item.error = s.error
    }
    listed.push(item)
  }
  const status: PlanStatus = {
    ...counts,
    plan_id: plan.id ?? null,
    goal: plan.goal ?? '',
    progress: counts.total === 0 ? 0 : (counts.completed + counts.skipped) / counts.total,
    success: counts.total > 0 && counts.completed === counts.total,
    subtasks: listed,
  }
  if (opts.format === 'mermaid') status.mermaid = planToMermaid(plan.subtasks)
  return status
}
