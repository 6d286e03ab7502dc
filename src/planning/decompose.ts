/**
 * `plan.decompose`: the model splits a goal into subtasks; the result is validated as a DAG and put in state as
 * `plan`. Strategies: `flat` (one call, a list), `hierarchical` (one call, nested phases flattened to path ids,
 * folded below `max_depth`), `iterative` (a call per round for the next steps, until the model says the plan is
 * complete or `max_subtasks` is reached).
 */

import * as v from 'valibot'
import type { Action, ActionContext } from '../actions/types.ts'
import { callPlanner, plannerModel } from './llm-call.ts'
import { flattenFlat, flattenHierarchy, parseReply } from './parse.ts'
import { createPlan } from './plan.ts'
import { decomposeMessages } from './prompts.ts'
import { flatReplySchema, hierarchicalReplySchema, iterativeReplySchema } from './reply-schemas.ts'
import type { PlanStrategy, ProposedSubtask } from './types.ts'
import { PLAN_STRATEGIES } from './types.ts'

const planner = v.object({
  model: v.optional(v.string()),
  prompt_template: v.optional(v.string()),
  temperature: v.optional(v.number()),
})

export const decomposeParams = v.object({
  goal: v.pipe(v.string(), v.minLength(1), v.description('What the plan must achieve.')),
  strategy: v.optional(v.pipe(v.picklist(PLAN_STRATEGIES), v.description('flat | hierarchical | iterative (default flat).')), 'flat'),
  max_depth: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.description('Hierarchical: levels kept; deeper ones fold into their ancestor (default 3).'),
    ),
    3,
  ),
  max_subtasks: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.description('Subtasks at most (default 15).')), 15),
  max_replans: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.description('Replans the plan allows (default 3).'))),
  model: v.optional(v.pipe(v.string(), v.description('Planner model; default settings.planner.model, then settings.llm.model.'))),
  temperature: v.optional(v.number()),
  prompt_template: v.optional(
    v.pipe(v.string(), v.description('Template for the user message; sees goal, strategy, max_depth, max_subtasks, planned.')),
  ),
  planner: v.optional(planner),
})

export type DecomposeParams = v.InferOutput<typeof decomposeParams>

export const decomposeAction: Action<DecomposeParams> = {
  name: 'plan.decompose',
  // The template sees goal, strategy, … — names only this action knows, so the engine must not render it first.
  raw: ['prompt_template', 'planner'],
  description: 'Split a goal into a DAG of subtasks with the model; puts the plan in state as `plan`.',
  params: decomposeParams,
  run: (params, ctx) => decompose(params, ctx),
}

export async function decompose(
  params: DecomposeParams,
  ctx: ActionContext,
): Promise<{ plan: unknown; plan_id: string; subtask_count: number }> {
  // planner: is raw for its prompt_template's sake; its model is a template over the state like any parameter.
  const plannerModelParam = params.planner?.model === undefined ? undefined : String(ctx.render(params.planner.model, {}, 'planner.model'))
  const settings = {
    model: plannerModel(ctx, plannerModelParam, params.model),
    temperature: params.planner?.temperature ?? params.temperature,
  }
  const template = params.planner?.prompt_template ?? params.prompt_template
  const strategy: PlanStrategy = params.strategy
  const userMessage = (planned: ProposedSubtask[]): string | undefined =>
    template === undefined
      ? undefined
      : String(
          ctx.render(
            template,
            { goal: params.goal, strategy, max_depth: params.max_depth, max_subtasks: params.max_subtasks, planned },
            'prompt_template',
          ),
        )
  const base = { goal: params.goal, strategy, maxDepth: params.max_depth, maxSubtasks: params.max_subtasks }

  let subtasks: ProposedSubtask[]
  let model: string | undefined
  if (strategy === 'iterative') {
    subtasks = []
    // Each round adds at least one step or ends, so max_subtasks rounds bound the loop.
    for (let round = 0; round < params.max_subtasks && subtasks.length < params.max_subtasks; round++) {
      const messages = decomposeMessages({ ...base, planned: subtasks, ...opt('userMessage', userMessage(subtasks)) })
      const reply = await callPlanner(ctx, settings, messages, iterativeReplySchema())
      model = reply.model
      const parsed = parseReply(reply.content, undefined, reply.parsed)
      const fresh = withFreshIds(flattenFlat(parsed.subtasks), subtasks).slice(0, params.max_subtasks - subtasks.length)
      subtasks.push(...fresh)
      if (parsed.planning_complete === true || fresh.length === 0) break
    }
  } else {
    const messages = decomposeMessages({ ...base, ...opt('userMessage', userMessage([])) })
    const schema = strategy === 'flat' ? flatReplySchema() : hierarchicalReplySchema(params.max_depth)
    const reply = await callPlanner(ctx, settings, messages, schema)
    model = reply.model
    const parsed = parseReply(reply.content, undefined, reply.parsed)
    subtasks =
      strategy === 'flat'
        ? flattenFlat(parsed.subtasks, params.max_subtasks)
        : flattenHierarchy(parsed.subtasks, params.max_depth, params.max_subtasks)
  }
  const plan = createPlan({ goal: params.goal, strategy, subtasks, ...opt('model', model), ...opt('maxReplans', params.max_replans) })
  return { plan, plan_id: plan.id, subtask_count: plan.subtasks.length }
}

/**
 * Iterative rounds: a step reusing a planned id gets the next free number. Its dependencies are left alone: an id
 * that is already planned means the planned step (a model that restarts numbering each round means "step 1 so far").
 */
function withFreshIds(batch: ProposedSubtask[], planned: readonly ProposedSubtask[]): ProposedSubtask[] {
  const taken = new Set(planned.map((s) => s.id))
  let n = planned.length + 1
  return batch.map((s) => {
    if (!taken.has(s.id)) {
      taken.add(s.id)
      return s
    }
    while (taken.has(String(n))) n++
    const id = String(n)
    taken.add(id)
    return { ...s, id }
  })
}

function opt<K extends string, T>(key: K, value: T | undefined): { [P in K]?: T } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: T }
}
