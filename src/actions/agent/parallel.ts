import * as v from 'valibot'
import { monotonicMs } from '../../core/util.ts'
import { defineAction } from '../types.ts'
import { type AgentConfig, agentsOf, notFound, verifyNames } from './agents.ts'
import { AGGREGATIONS, collect, consensus, first, vote } from './aggregate.ts'
import { callAgent, extraSettings, pooled } from './call.ts'
import { CallJournal } from './journal.ts'
import { agentNames, taskText, timeoutSeconds } from './params.ts'

const OWN = [
  'agents',
  'task',
  'aggregation',
  'max_concurrent',
  'timeout',
  'consensus_threshold',
  'consensus_max_rounds',
  'consensus_max_retries',
]
const rounds = v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be ≥ 1'), v.maxValue(10, 'must be ≤ 10'))

/**
 * TEA's `agent.parallel`: the same task to several agents at once, the answers aggregated (aggregate.ts). A name
 * that is not an agent is skipped with a line in the log, as TEA skips it. With `consensus`, all agents are asked
 * again until enough agree or `consensus_max_rounds` rounds were made.
 */
export const agentParallel = defineAction({
  name: 'agent.parallel',
  description:
    "TEA's agent.parallel: sends one task to several agents of settings.agents at once and aggregates the answers (collect, vote, first, consensus).",
  params: v.looseObject({
    agents: agentNames,
    task: taskText,
    aggregation: v.optional(v.pipe(v.picklist(AGGREGATIONS), v.description('collect (default), vote, first or consensus.')), 'collect'),
    max_concurrent: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(1, 'must be ≥ 1'), v.description('Most calls at once (default: all).')),
    ),
    timeout: timeoutSeconds("Seconds, instead of each agent's timeout."),
    consensus_threshold: v.optional(
      v.pipe(v.number(), v.minValue(0), v.maxValue(1), v.description('Share of agreeing answers consensus needs (default 0.5).')),
      0.5,
    ),
    consensus_max_rounds: v.optional(v.pipe(rounds, v.description('Most rounds consensus makes (default 3).'))),
    /** The spelling in TEA's reference; its source reads consensus_max_rounds. */
    consensus_max_retries: v.optional(rounds),
  }),
  verify: verifyNames(['agents']),
  async run(p, ctx) {
    const start = monotonicMs()
    const known = agentsOf(ctx)
    const agents: AgentConfig[] = []
    for (const name of p.agents) {
      const a = known.get(name)
      if (a) agents.push(p.timeout === undefined ? a : { ...a, llm: { ...a.llm, timeout: p.timeout } })
      else ctx.emit({ type: 'log', node: ctx.node, message: `agent.parallel: ${notFound(name, known)}` })
    }
    if (agents.length === 0) return { error: 'No valid agents found', agents_requested: p.agents, success: false }
    const journal = await CallJournal.open(ctx)
    const site = { ctx, journal, extra: extraSettings(p, OWN, ctx, 'agent.parallel') }
    const ask = (round: number) => pooled(agents, p.max_concurrent ?? agents.length, (a, i) => callAgent(site, a, p.task, `${round}.${i}`))
    const done = (agg: Record<string, unknown>) => ({
      ...agg,
      success: true,
      elapsed_ms: monotonicMs() - start,
      agents_called: agents.map((a) => a.name),
    })
    let results = await ask(1)
    let result: Record<string, unknown>
    if (p.aggregation === 'consensus') {
      const most = p.consensus_max_rounds ?? p.consensus_max_retries ?? 3
      let round = 1
      let agg = consensus(results, p.consensus_threshold)
      while (!agg.consensus_reached && round < most) {
        round++
        results = await ask(round)
        agg = consensus(results, p.consensus_threshold)
      }
      result = done({ ...agg, rounds: round })
    } else {
      const strategy = p.aggregation === 'vote' ? vote : p.aggregation === 'first' ? first : collect
      result = { ...done(strategy(results)), raw_results: results }
    }
    await journal.clear()
    return result
  },
})
