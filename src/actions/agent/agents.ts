/**
 * TEA's `settings.agents`: named sub-agents, each a model with its own system prompt, sampling and retry settings,
 * inheriting what it leaves out from `settings.llm` (TEA's agent_actions.py `AgentRegistry`). The shape is checked
 * when the file loads (src/agent/schema.ts); what an action reads here is that checked mapping.
 */

import * as v from 'valibot'
import { agentsSettingsSchema } from '../tea-sections.ts'
import { TeaError } from '../../core/errors.ts'
import type { LlmSettings, LlmUsage } from '../../llm/types.ts'
import type { ActionContext, VerifyContext } from '../types.ts'

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

/**
 * `tea validate`'s check of the agent names a node gives as written (`keys`: its parameters that name one agent
 * or a list of them). A name written as a template is checked when it runs. TEA finds a missing agent only then.
 */
export function verifyNames(keys: readonly string[]) {
  return async (params: Readonly<Record<string, unknown>>, ctx: VerifyContext): Promise<string[]> => {
    const defined = ctx.settings.sections.agents ?? {}
    const known = Object.keys(defined)
    const found: string[] = []
    for (const key of keys) {
      const value = params[key]
      for (const name of Array.isArray(value) ? value : [value])
        if (typeof name === 'string' && !name.includes('{') && !Object.hasOwn(defined, name))
          found.push(`${key}: '${name}' is not an agent of settings.agents (${known.length ? known.join(', ') : 'none defined'})`)
    }
    return found
  }
}
