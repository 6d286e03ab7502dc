/**
 * `plan.replan`: completed subtasks (and their results) stay exactly as they are; failed, skipped, pending and
 * in-flight ones are replaced by what the model proposes, given the failure. The call goes to the model that made
 * the plan (`plan.model`). Past `max_replans` it is MAX_REPLANS_EXCEEDED and the plan is left as it was.
 */

import * as v from 'valibot'
import type { Action, ActionContext } from '../actions/types.ts'
import { TeaError } from '../core/errors.ts'
import { assertDag } from './dag.ts'
import { callPlanner, plannerModel } from './llm-call.ts'
import { flattenFlat, parseReply } from './parse.ts'
import { readPlan } from './plan.ts'
import { replanMessages } from './prompts.ts'
import { replanReplySchema } from './reply-schemas.ts'
import type { Plan, ProposedSubtask } from './types.ts'
import { newSubtask } from './types.ts'

export const replanParams = v.object({
  plan: v.optional(v.pipe(v.unknown(), v.description('The plan to revise; default state.plan.'))),
  failed_subtask: v.optional(
    v.pipe(v.union([v.string(), v.number()]), v.transform(String), v.description('Id of the subtask that failed.')),
  ),
  error: v.optional(v.pipe(v.string(), v.description('What went wrong, for the prompt.'))),
  max_replans: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.description("Overrides the plan's own limit."))),
  max_subtasks: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 15),
  model: v.optional(v.pipe(v.string(), v.description('Used only when the plan does not record its model.'))),
  temperature: v.optional(v.number()),
})

export type ReplanParams = v.InferOutput<typeof replanParams>

export const replanAction: Action<ReplanParams> = {
  name: 'plan.replan',
  description: 'Replace the failed and unfinished subtasks of a plan with new ones from the same model; completed ones are kept.',
  params: replanParams,
  async run(params, ctx) {
    const plan = readPlan(params.plan ?? ctx.state.plan)
    const failure = failureOf(plan, params.failed_subtask, params.error)
    const opts: ReplanOptions = { maxSubtasks: params.max_subtasks }
    if (failure) opts.failure = failure
    if (params.max_replans !== undefined) opts.maxReplans = params.max_replans
    if (params.model !== undefined) opts.model = params.model
    if (params.temperature !== undefined) opts.temperature = params.temperature
    const next = await replan(plan, ctx, opts)
    return { plan: next, replan_count: next.replan_count }
  },
}

export interface ReplanOptions {
  failure?: { id: string; error: string }
  maxReplans?: number
  maxSubtasks: number
  model?: string
  temperature?: number
}

export async function replan(plan: Plan, ctx: ActionContext, opts: ReplanOptions): Promise<Plan> {
  const max = opts.maxReplans ?? plan.max_replans
  if (plan.replan_count >= max)
    throw new TeaError(
      'MAX_REPLANS_EXCEEDED',
      `too many replans of plan ${plan.id}: ${plan.replan_count + 1} > ${max} (max_replans); the plan is left unchanged`,
      {
        details: { replan_count: plan.replan_count, max_replans: max, plan_id: plan.id },
        hint: 'raise max_replans, or handle the failure with on_subtask_failure: skip or abort',
      },
    )
  const completed = plan.subtasks.filter((s) => s.status === 'completed')
  const replaced = plan.subtasks.filter((s) => s.status !== 'completed')
  const messages = replanMessages({
    goal: plan.goal,
    completed,
    replaced,
    maxSubtasks: opts.maxSubtasks,
    ...(opts.failure ? { failure: opts.failure } : {}),
  })
  const reply = await callPlanner(
    ctx,
    { model: plannerModel(ctx, plan.model, opts.model), temperature: opts.temperature },
    messages,
    replanReplySchema(),
  )
  const parsed = parseReply(reply.content, 'replan', reply.parsed)
  const fresh = avoidTaken(flattenFlat(parsed.subtasks, opts.maxSubtasks), new Set(completed.map((s) => s.id)), plan.replan_count + 1)
  const subtasks = [...completed, ...fresh.map(newSubtask)]
  assertDag(subtasks, 'revised plan')
  const next: Plan = { ...plan, subtasks, replan_count: plan.replan_count + 1 }
  if (parsed.rationale !== undefined) next.rationale = parsed.rationale
  if (plan.model === undefined) next.model = reply.model
  return next
}

/** The failure to explain: the one named, else the first failed subtask in the plan. */
export function failureOf(plan: Plan, id?: string, error?: string): { id: string; error: string } | undefined {
  const failed = id !== undefined ? plan.subtasks.find((s) => s.id === id) : plan.subtasks.find((s) => s.status === 'failed')
  if (!failed && id === undefined) return undefined
  return { id: failed?.id ?? id!, error: error ?? failed?.error ?? 'unknown error' }
}

/**
 * New ids must not collide with completed ones: a colliding new subtask becomes `<id>.r<n>`, and references to it
 * from the other new subtasks follow; references to ids only completed subtasks have stay as they are.
 */
function avoidTaken(fresh: ProposedSubtask[], taken: Set<string>, round: number): ProposedSubtask[] {
  const renamed = new Map<string, string>()
  for (const s of fresh) if (taken.has(s.id)) renamed.set(s.id, `${s.id}.r${round}`)
  if (renamed.size === 0) return fresh
  return fresh.map((s) => ({
    ...s,
    id: renamed.get(s.id) ?? s.id,
    dependencies: s.dependencies.map((d) => renamed.get(d) ?? d),
  }))
}
