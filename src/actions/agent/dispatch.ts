import * as v from 'valibot'
import { backoffDelay, monotonicMs, sleep } from '../../core/util.ts'
import { defineAction } from '../types.ts'
import { type AgentReply, agentsOf, notFound, verifyNames } from './agents.ts'
import { callAgent, extraSettings } from './call.ts'
import { CallJournal } from './journal.ts'
import { agentName, taskText, timeoutSeconds } from './params.ts'

const OWN = ['agent', 'task', 'timeout', 'max_retries']

/**
 * TEA's `agent.dispatch`: one task to one agent of `settings.agents`, tried up to its `retry.max_attempts` times
 * with `retry.backoff` between tries (1 s, then times the backoff). A missing agent or a call that never
 * succeeds is a result with `success: false`, as in TEA.
 */
export const agentDispatch = defineAction({
  name: 'agent.dispatch',
  description:
    "TEA's agent.dispatch: sends a task to one agent of settings.agents (its own model, system prompt and sampling) and returns {response, content, agent, success, attempts, usage, elapsed_ms}.",
  params: v.looseObject({
    agent: agentName,
    task: taskText,
    timeout: timeoutSeconds("Seconds, instead of the agent's timeout."),
    max_retries: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1, 'must be ≥ 1'),
        v.maxValue(10, 'must be ≤ 10'),
        v.description("Attempts, instead of the agent's retry.max_attempts."),
      ),
    ),
  }),
  verify: verifyNames(['agent']),
  async run(p, ctx) {
    const start = monotonicMs()
    const elapsed = (): number => monotonicMs() - start
    const agents = agentsOf(ctx)
    let agent = agents.get(p.agent)
    if (!agent) return { error: notFound(p.agent, agents), agent: p.agent, success: false, elapsed_ms: elapsed() }
    if (p.timeout !== undefined) agent = { ...agent, llm: { ...agent.llm, timeout: p.timeout } }
    const attempts = p.max_retries ?? agent.retry.max_attempts
    const journal = await CallJournal.open(ctx)
    const site = { ctx, journal, extra: extraSettings(p, OWN, ctx, 'agent.dispatch') }
    let reply: AgentReply | undefined
    let n = 0
    while (n < attempts) {
      n++
      reply = await callAgent(site, agent, p.task, `${n}`)
      if (reply.success) break
      if (n < attempts) {
        // TEA's: 1 s, then times the backoff (capped at 30 s)
        await sleep(backoffDelay(n - 1, 1000, { factor: agent.retry.backoff, jitter: false }), ctx.signal)
      }
    }
    await journal.clear()
    if (!reply?.success)
      return { error: reply?.error ?? 'Unknown error', agent: p.agent, success: false, attempts: n, elapsed_ms: elapsed() }
    return { ...reply, response: reply.content, attempts: n, elapsed_ms: elapsed() }
  },
})
