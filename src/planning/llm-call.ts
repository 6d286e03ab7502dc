/**
 * One planning call to the model: `settings.llm` under the planner's own settings, the reply's JSON Schema as
 * `format` (structured output), the run's signal. Returns the text, any structured value, and the model used.
 */

import type { ActionContext } from '../actions/types.ts'
import { mergeLlmSettings } from '../llm/settings.ts'
import type { ChatMessage, JsonSchema } from '../llm/types.ts'

export interface PlannerSettings {
  model?: string | undefined
  temperature?: number | undefined
}

export interface PlannerReply {
  content: string
  parsed?: unknown
  model: string
}

export async function callPlanner(
  ctx: ActionContext,
  settings: PlannerSettings,
  messages: ChatMessage[],
  format: JsonSchema,
): Promise<PlannerReply> {
  const merged = mergeLlmSettings(ctx.settings.llm, { model: settings.model, temperature: settings.temperature, format })
  const result = await ctx.llm.call({ ...merged, messages, signal: ctx.signal })
  const reply: PlannerReply = { content: result.content, model: result.model }
  if (result.parsed !== undefined) reply.parsed = result.parsed
  return reply
}

/** The planner model: the node's `planner.model`, its `model`, `settings.planner.model`, then `settings.llm.model`. */
export function plannerModel(ctx: ActionContext, ...candidates: Array<string | undefined>): string | undefined {
  for (const c of candidates) if (c) return c
  const fromSettings = ctx.settings.sections.planner?.model
  if (typeof fromSettings === 'string' && fromSettings) return fromSettings
  return ctx.settings.llm.model
}
