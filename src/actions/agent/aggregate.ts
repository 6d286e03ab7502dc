/**
 * TEA's aggregations of `agent.parallel` answers (agent_actions.py `AGGREGATION_STRATEGIES`), with its result
 * shapes. The answers come in the order the agents are listed (TEA takes them in the order they finish, which
 * an author cannot rely on; listed order is one of those orders and the same on every run).
 */

import type { AgentReply } from './agents.ts'
import { replyText } from './call.ts'

export const AGGREGATIONS = ['collect', 'vote', 'first', 'consensus'] as const

/** Every answer; a failed call is shown as its failure. */
export function collect(results: readonly AgentReply[]): Record<string, unknown> {
  const responses = results.map(replyText)
  return { responses, count: responses.length, aggregation: 'collect' }
}

/** The answers of the calls that succeeded, as text, and how often each was given (first given first). */
function tally(results: readonly AgentReply[]): { answers: string[]; counts: Map<string, number> } {
  const answers = results.filter((r) => r.success).map((r) => String(r.content ?? ''))
  const counts = new Map<string, number>()
  for (const a of answers) counts.set(a, (counts.get(a) ?? 0) + 1)
  return { answers, counts }
}

/** The most given answer and its count; a tie goes to the one given first. */
function leader(counts: Map<string, number>): [string, number] | undefined {
  let best: [string, number] | undefined
  for (const entry of counts) if (!best || entry[1] > best[1]) best = entry
  return best
}

export function vote(results: readonly AgentReply[]): Record<string, unknown> {
  const { answers, counts } = tally(results)
  const top = leader(counts)
  if (!top) return { result: null, votes: {}, unanimous: false, aggregation: 'vote' }
  return {
    result: top[0],
    votes: Object.fromEntries(counts),
    unanimous: counts.size === 1,
    total_votes: answers.length,
    aggregation: 'vote',
  }
}

export function first(results: readonly AgentReply[]): Record<string, unknown> {
  const found = results.find((r) => r.success)
  if (!found) return { result: null, error: 'No successful responses', aggregation: 'first' }
  return { result: replyText(found), agent: found.agent, aggregation: 'first' }
}

export function consensus(results: readonly AgentReply[], threshold: number): Record<string, unknown> & { consensus_reached: boolean } {
  const { answers, counts } = tally(results)
  const top = leader(counts)
  if (!top) return { result: null, agreement: 0, consensus_reached: false, aggregation: 'consensus' }
  const agreement = top[1] / answers.length
  const reached = agreement >= threshold
  return { result: reached ? top[0] : null, agreement, consensus_reached: reached, threshold, aggregation: 'consensus' }
}
