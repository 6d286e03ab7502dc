/**
 * TEA's `settings.agents`: named sub-agents, each a model with its own system prompt, sampling and retry settings,
 * inheriting what it leaves out from `settings.llm` (TEA's agent_actions.py `AgentRegistry`). The shape is checked
 * when the file loads (src/agent/schema.ts); what an action reads here is that checked mapping.
 */

import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import type { LlmSettings, LlmUsage } from '../../llm/types.ts'
import type { ActionContext } from '../types.ts'

/** Most agents one file may define, and one action may name: each is a model call, often several. */
export const MAX_AGENTS = 64

const seconds = v.pipe(v.number(), v.gtValue(0, 'must be > 0'), v.maxValue(3600, 'must be ≤ 3600 seconds'))

const agentShape = v.looseObject({
  model: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  /** tea's own: which server a bare model name goes to (else settings.llm.provider). */
  provider: v.optional(v.string()),
  system_prompt: v.optional(v.pipe(v.string(), v.maxLength(1_000_000, 'must be at most 1,000,000 characters'))),
  temperature: v.optional(v.pipe(v.number(), v.minValue(0, 'must be between 0.0 and 2.0'), v.maxValue(2, 'must be between 0.0 and 2.0'))),
  max_tokens: v.optional(v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be ≥ 1'))),
  /** TEA lists tool names here and never hands them to the model (its dispatch calls llm.call without tools). */
  tools: v.optional(v.array(v.string())),
  timeout: v.optional(seconds),
  retry: v.optional(
    v.looseObject({
      max_attempts: v.optional(
        v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be ≥ 1'), v.maxValue(10, 'must be ≤ 10')),
      ),
      backoff: v.optional(v.pipe(v.number(), v.minValue(1, 'must be ≥ 1'), v.maxValue(10, 'must be ≤ 10'))),
    }),
  ),
})

/** `settings.agents` as the loader checks it. */
export const agentsSettingsSchema = v.pipe(
  v.record(v.pipe(v.string(), v.minLength(1, 'an agent name must not be empty')), agentShape),
  v.check((m) => Object.keys(m).length <= MAX_AGENTS, `at most ${MAX_AGENTS} agents`),
)

export interface AgentConfig {
  name: string
  /** The model call's settings: settings.llm under the agent's own. */
  llm: LlmSettings
  system_prompt?: string
  retry: { max_attempts: number; backoff: number }
}

/** One sub-agent call's answer, as TEA's `_call_llm` gives it. */
export interface AgentReply {
  agent: string
  success: boolean
  content?: string
  model?: string
  usage?: LlmUsage
  error?: string
}

/** The agents of this run's file, by name, in the order written. */
export function agentsOf(ctx: ActionContext): Map<string, AgentConfig> {
  const raw = ctx.settings.sections.agents ?? {}
  const parsed = v.safeParse(agentsSettingsSchema, raw)
  if (!parsed.success) {
    throw new TeaError('INVALID_PARAMS', `settings.agents: ${parsed.issues[0].message}`, {
      where: { node: ctx.node, field: 'settings.agents' },
    })
  }
  const llm = ctx.settings.llm
  const agents = new Map<string, AgentConfig>()
  for (const [name, a] of Object.entries(parsed.output)) {
    const model = a.model ?? llm.model
    if (!model) {
      throw new TeaError('INVALID_PARAMS', `agent '${name}' must name a model or inherit one from settings.llm.model`, {
        where: { node: ctx.node, field: `settings.agents.${name}` },
      })
    }
    agents.set(name, {
      name,
      // TEA's defaults where neither the agent nor settings.llm says: temperature 0.7, a 60 s timeout.
      llm: {
        ...llm,
        model,
        ...(a.provider !== undefined && { provider: a.provider }),
        temperature: a.temperature ?? llm.temperature ?? 0.7,
        timeout: a.timeout ?? llm.timeout ?? 60,
        ...((a.max_tokens ?? llm.max_tokens) !== undefined && { max_tokens: a.max_tokens ?? llm.max_tokens }),
      },
      ...(a.system_prompt && { system_prompt: a.system_prompt }),
      retry: { max_attempts: a.retry?.max_attempts ?? 3, backoff: a.retry?.backoff ?? 2 },
    })
  }
  return agents
}

/** TEA's message for a name that is not among the agents. */
export function notFound(name: string, agents: Map<string, AgentConfig>): string {
  return `Agent '${name}' not found. Available agents: ${[...agents.keys()].join(', ') || '(none)'}`
}
