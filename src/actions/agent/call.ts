/**
 * One sub-agent call (TEA's `_call_llm`): the agent's system prompt and the task as the messages, the agent's model
 * settings, through the run's model client. A model failure is an answer with `success: false`, as in TEA, so
 * the aggregations can count it; cancellation and tea's own refusals still stop the node.
 */

import { errorMessage, isTeaError } from '../../core/errors.ts'
import { isPlainObject } from '../../core/util.ts'
import { LLM_SETTING_KEYS, mergeLlmSettings } from '../../llm/settings.ts'
import type { ChatMessage, LlmSettings } from '../../llm/types.ts'
import type { ActionContext } from '../types.ts'
import type { AgentConfig, AgentReply } from './agents.ts'

import type { CallJournal } from './journal.ts'

/** Model failures TEA turns into `success: false`; anything else (cancellation, a bad model string) is thrown. */
const CALL_FAILURES = new Set([
  'LLM_UNREACHABLE',
  'LLM_TIMEOUT',
  'LLM_HTTP_ERROR',
  'LLM_BAD_RESPONSE',
  'LLM_STREAM_CUT',
  'LLM_REPLY_TOO_LARGE',
  'LLM_SHELL_ERROR',
])

export interface CallSite {
  ctx: ActionContext
  journal: CallJournal
  /** The node's own model settings beyond the action's parameters (TEA passes them on to llm.call). */
  extra: LlmSettings
}

/** Calls `agent` with `task`; `id` names the call within the node, for the journal. */
export async function callAgent(site: CallSite, agent: AgentConfig, task: string, id: string): Promise<AgentReply> {
  const prompt = `${agent.system_prompt ?? ''}\u0000${task}`
  const saved = site.journal.recall(id, prompt)
  if (saved) return saved
  const messages: ChatMessage[] = [
    ...(agent.system_prompt ? [{ role: 'system' as const, content: agent.system_prompt }] : []),
    { role: 'user', content: task },
  ]
  let reply: AgentReply
  try {
    const result = await site.ctx.llm.call({ ...mergeLlmSettings(agent.llm, site.extra), messages, signal: site.ctx.signal })
    reply = { agent: agent.name, success: true, content: result.content, model: result.model, usage: result.usage }
  } catch (e) {
    if (!isTeaError(e) || !CALL_FAILURES.has(e.code) || site.ctx.signal.aborted) throw e
    return { agent: agent.name, success: false, error: errorMessage(e) }
  }
  await site.journal.record(id, prompt, reply)
  return reply
}

/**
 * The parameters TEA passes on to llm.call: model settings tea knows are used, the rest are named in the run's
 * log (TEA hands them to llm.call, which reads none of them).
 */
export function extraSettings(params: Record<string, unknown>, own: readonly string[], ctx: ActionContext, action: string): LlmSettings {
  const extra: Record<string, unknown> = {}
  const unread: string[] = []
  for (const [k, value] of Object.entries(params)) {
    if (own.includes(k) || value === undefined) continue
    if ((LLM_SETTING_KEYS as readonly string[]).includes(k) && k !== 'shell_providers' && k !== 'model_dir') extra[k] = value
    else unread.push(k)
  }
  if (unread.length) {
    ctx.emit({
      type: 'log',
      node: ctx.node,
      message: `${action}: ${unread.join(', ')} ${unread.length === 1 ? 'is not a parameter' : 'are not parameters'} of ${action}; TEA passes ${unread.length === 1 ? 'it' : 'them'} to llm.call, which reads none`,
    })
  }
  return extra as LlmSettings
}

/** The text TEA reads from a reply: its content, else its response, else the reply itself. */
export function replyText(r: AgentReply | Record<string, unknown>): unknown {
  const x = r as Record<string, unknown>
  return x.content ?? x.response ?? (isPlainObject(x) ? x : '')
}

/** Runs `work` over `items` with at most `limit` at once; results in the order of `items`. */
export async function pooled<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length)
  let next = 0
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++
      out[i] = await work(items[i]!, i)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane))
  return out
}
