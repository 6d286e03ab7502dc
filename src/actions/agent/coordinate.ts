import * as v from 'valibot'
import { monotonicMs } from '../../core/util.ts'
import { defineAction } from '../types.ts'
import { type AgentConfig, type AgentReply, agentsOf, notFound, verifyNames } from './agents.ts'
import { type CallSite, callAgent, extraSettings, pooled } from './call.ts'
import { CallJournal } from './journal.ts'
import { agentName, agentNames, taskText } from './params.ts'

const OWN = ['leader', 'workers', 'task', 'validation_prompt', 'max_rounds', 'parallel_workers']

/**
 * TEA's `agent.coordinate`: each round the leader splits the task into one subtask per worker (a JSON array in its
 * answer; without one every worker gets the whole task), the workers answer, and the leader aggregates their
 * answers into the result. A round whose leader or workers all fail is followed by another, up to `max_rounds`.
 * The prompts are TEA's.
 */
export const agentCoordinate = defineAction({
  name: 'agent.coordinate',
  description:
    "TEA's agent.coordinate: a leader agent splits the task among worker agents of settings.agents and aggregates their answers; returns {result, rounds, worker_results, success}.",
  params: v.looseObject({
    leader: agentName,
    workers: agentNames,
    task: taskText,
    validation_prompt: v.optional(v.pipe(taskText, v.description("Added to the leader's aggregation prompt."))),
    max_rounds: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1, 'must be ≥ 1'),
        v.maxValue(10, 'must be ≤ 10'),
        v.description('Most rounds (default 3).'),
      ),
      3,
    ),
    parallel_workers: v.optional(v.pipe(v.boolean(), v.description('Ask the workers at once (default) or one after another.')), true),
  }),
  verify: verifyNames(['leader', 'workers']),
  async run(p, ctx) {
    const start = monotonicMs()
    const known = agentsOf(ctx)
    const leader = known.get(p.leader)
    if (!leader) return { error: notFound(p.leader, known), success: false }
    const workers: AgentConfig[] = []
    for (const name of p.workers) {
      const w = known.get(name)
      if (w) workers.push(w)
      else ctx.emit({ type: 'log', node: ctx.node, message: `agent.coordinate: ${notFound(name, known)}` })
    }
    if (workers.length === 0) return { error: 'No valid workers found', success: false }
    const journal = await CallJournal.open(ctx)
    const site: CallSite = { ctx, journal, extra: extraSettings(p, OWN, ctx, 'agent.coordinate') }
    const all: AgentReply[][] = []
    let final: string | null = null
    let round = 0
    while (round < p.max_rounds) {
      round++
      const plan = await callAgent(site, leader, planPrompt(p.task, workers.length), `${round}.plan`)
      if (!plan.success) continue
      const subtasks = subtasksOf(plan.content ?? '', p.task, workers.length)
      const results = await pooled(workers, p.parallel_workers ? workers.length : 1, (w, i) =>
        callAgent(site, w, subtasks[i]!, `${round}.worker.${i}`),
      )
      all.push(results)
      const answers = results.filter((r) => r.success).map((r) => r.content ?? '')
      if (answers.length === 0) continue
      const merged = await callAgent(site, leader, aggregationPrompt(p.task, answers, p.validation_prompt), `${round}.final`)
      if (merged.success) {
        final = merged.content ?? ''
        break
      }
    }
    await journal.clear()
    return {
      result: final,
      rounds: round,
      worker_results: all,
      success: final !== null,
      leader: p.leader,
      workers: workers.map((w) => w.name),
      elapsed_ms: monotonicMs() - start,
    }
  },
})

function planPrompt(task: string, workers: number): string {
  return `You are a coordinator. Break down this task into subtasks for ${workers} workers.\n\nTask: ${task}\n\nRespond with a JSON array of subtasks, one for each worker:\n["subtask 1", "subtask 2", ...]`
}

function aggregationPrompt(task: string, answers: string[], validation: string | undefined): string {
  const lines = answers.map((a, i) => `- Worker ${i + 1}: ${a}`).join('\n')
  const prompt = `You are a coordinator. Aggregate these worker responses into a final answer.\n\nOriginal task: ${task}\n\nWorker responses:\n${lines}\n\nProvide the final aggregated result.`
  return validation ? `${prompt}\n\n${validation}` : prompt
}

/** The leader's subtasks: the JSON array from its first `[` to its last `]`, padded with the last one to one per worker. */
export function subtasksOf(answer: string, task: string, workers: number): string[] {
  let subtasks: string[] = []
  const from = answer.indexOf('[')
  const to = answer.lastIndexOf(']')
  if (from >= 0 && to > from) {
    try {
      const parsed: unknown = JSON.parse(answer.slice(from, to + 1))
      if (Array.isArray(parsed))
        subtasks = parsed.slice(0, workers).map((s) => (typeof s === 'string' ? s : (JSON.stringify(s) ?? String(s))))
      else subtasks = Array(workers).fill(task)
    } catch {
      subtasks = Array(workers).fill(task)
    }
  } else subtasks = Array(workers).fill(task)
  while (subtasks.length < workers) subtasks.push(subtasks.at(-1) ?? task)
  return subtasks
}
