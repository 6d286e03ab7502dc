import * as v from 'valibot'
import { isTeaError } from '../../core/errors.ts'
import { monotonicMs, type State } from '../../core/util.ts'
import { defineAction, type ActionContext } from '../types.ts'
import { type AgentConfig, agentsOf, notFound, verifyNames } from './agents.ts'
import { callAgent, extraSettings } from './call.ts'
import { CallJournal } from './journal.ts'
import { agentNames } from './params.ts'

const OWN = ['agents', 'task', 'tasks', 'transform', 'early_exit_on_failure', 'early_exit_on_error', 'output_key']
const template = v.pipe(v.string(), v.maxLength(1_000_000, 'must be at most 1,000,000 characters'))

/**
 * TEA's `agent.sequential`: agents one after another, each given the previous one's answer. The task templates
 * are rendered per agent (raw here, so the engine leaves `{{ previous_response }}` to this action) over the state
 * plus `previous_response`, `chain_index`, `chain_length` and, in `transform`, `current_response`; as in TEA the
 * state's keys are also in scope by themselves, and a template that fails to render is used as written.
 */
export const agentSequential = defineAction({
  name: 'agent.sequential',
  description:
    "TEA's agent.sequential: runs agents of settings.agents in a chain, each given the previous answer ({{ previous_response }}); returns {result, chain, success}.",
  params: v.looseObject({
    agents: agentNames,
    task: v.optional(v.pipe(template, v.description('The task of every agent; default: {{ state.input }}, then {{ previous_response }}.'))),
    tasks: v.optional(v.pipe(v.array(template), v.description('One task per agent.'))),
    transform: v.optional(
      v.pipe(template, v.description('What is passed on instead of an answer ({{ current_response }} is the answer).')),
    ),
    early_exit_on_failure: v.optional(v.pipe(v.boolean(), v.description('Stop at the first failure (default true).'))),
    /** The spelling in TEA's reference; its source reads early_exit_on_failure. */
    early_exit_on_error: v.optional(v.boolean()),
    output_key: v.optional(
      v.pipe(v.string(), v.minLength(1), v.description('A second key the final answer is returned under.')),
      'sequential_result',
    ),
  }),
  raw: ['task', 'tasks', 'transform'],
  verify: verifyNames(['agents']),
  async run(p, ctx) {
    const start = monotonicMs()
    const elapsed = (): number => monotonicMs() - start
    const earlyExit = p.early_exit_on_failure ?? p.early_exit_on_error ?? true
    const known = agentsOf(ctx)
    const agents: AgentConfig[] = []
    for (const name of p.agents) {
      const a = known.get(name)
      if (a) agents.push(a)
      else if (earlyExit) return { error: notFound(name, known), success: false, chain: [] }
      else ctx.emit({ type: 'log', node: ctx.node, message: `agent.sequential: ${notFound(name, known)}` })
    }
    if (agents.length === 0) return { error: 'No valid agents found', success: false, chain: [] }
    if (p.tasks && p.tasks.length !== agents.length) {
      return { error: `Tasks count (${p.tasks.length}) must match agents count (${agents.length})`, success: false, chain: [] }
    }
    const journal = await CallJournal.open(ctx)
    const site = { ctx, journal, extra: extraSettings(p, OWN, ctx, 'agent.sequential') }
    const chain: Array<{ agent: string; response: string; success: boolean }> = []
    const scope: State = { ...ctx.state }
    let previous = ''
    for (const [i, agent] of agents.entries()) {
      Object.assign(scope, { previous_response: previous, chain_index: i, chain_length: agents.length })
      const written = p.tasks?.[i] ?? p.task ?? (i > 0 ? '{{ previous_response }}' : '{{ state.input }}')
      const reply = await callAgent(site, agent, renderAsTea(ctx, written, scope, 'task'), `${i}`)
      chain.push({ agent: agent.name, response: reply.content ?? '', success: reply.success })
      if (!reply.success) {
        if (!earlyExit) continue
        await journal.clear()
        return { error: reply.error ?? 'Agent failed', chain, success: false, failed_at: i, elapsed_ms: elapsed() }
      }
      previous = reply.content ?? ''
      if (p.transform !== undefined) {
        scope.current_response = previous
        previous = renderAsTea(ctx, p.transform, scope, 'transform')
      }
    }
    await journal.clear()
    return {
      result: previous,
      [p.output_key]: previous,
      chain,
      success: true,
      agents_called: agents.map((a) => a.name),
      elapsed_ms: elapsed(),
    }
  },
})

/** TEA's process_template: `state` and the state's own keys in scope; on a template error, the text as written. */
function renderAsTea(ctx: ActionContext, text: string, scope: State, field: string): string {
  if (!text.includes('{{') && !text.includes('{%')) return text
  try {
    const out = ctx.render(text, { ...scope, state: scope, variables: ctx.variables, settings: ctx.settings }, field)
    return typeof out === 'string' ? out : (JSON.stringify(out) ?? String(out))
  } catch (e) {
    if (!isTeaError(e, 'TEMPLATE_ERROR') && !isTeaError(e, 'TEMPLATE_SYNTAX')) throw e
    ctx.emit({
      type: 'log',
      node: ctx.node,
      message: `agent.sequential: the ${field} template failed (${e.message}); used as written, as TEA does`,
    })
    return text
  }
}
