/**
 * `reason.react` (AC2): Thought → Action → Observation. Each turn the model sees the goal, the tools and every
 * earlier step with its observation, and answers with one step: a tool to run (through the registry, for real)
 * or `finish` (TEA's `final_answer` too) with the answer.
 *
 * - `max_steps` is exact: 0 makes no model call; a model that never finishes stops after N steps, with
 *   `final_answer: null` and `stop_reason: 'max_steps'`.
 * - A reply that is not a step gets a corrective turn (what was wrong, the format again), and counts as a step.
 * - A tool that fails, times out (`tool_timeout`), is unknown, unlisted or not a name at all is an observation the
 *   model reads, never a crash, and an unlisted name is never run.
 * - With `native_tools: true` the tools go out through the server's tool calling; a reply without a tool call is
 *   read as a text step, and failing that as the final answer.
 * - Every step is checkpointed as it completes (store memory, under the run and node). A run killed mid-loop
 *   resumes at the next step: finished tool calls are not run again. The checkpoint of step N is written while
 *   the model works on step N+1, and awaited before that step's tool runs, so it costs no time on the step's path.
 */

import * as v from 'valibot'
import { defineAction, type ActionContext } from '../actions/types.ts'
import { errorMessage, isTeaError } from '../core/errors.ts'
import type { State } from '../core/util.ts'
import type { ChatMessage } from '../llm/types.ts'
import { ask, modelEntries, type Reply } from './model.ts'
import { isTerminalAction, parseReactStep, type ReactStep } from './parse.ts'
import { REACT_SCHEMA, reactPrompt } from './prompts.ts'
import { fromNativeName, Toolbox } from './tools.ts'
import { traceFileEntry, Tracer, withoutNul, type TraceEntry } from './trace.ts'

const wholeNumber = 'must be a whole number ≥ 0'

const params = v.object({
  goal: v.pipe(v.string(), v.minLength(1), v.description('What to find out or achieve.')),
  tools: v.optional(v.pipe(v.array(v.string()), v.description('The actions the model may use, by name (default none).')), []),
  max_steps: v.optional(
    v.pipe(
      v.number(wholeNumber),
      v.integer(wholeNumber),
      v.minValue(0, wholeNumber),
      v.description('Steps at most, the finishing one included (default 10).'),
    ),
    10,
  ),
  native_tools: v.optional(
    v.pipe(v.boolean(), v.description("Offer the tools through the server's tool calling instead of the text protocol.")),
    false,
  ),
  tool_timeout: v.optional(v.pipe(v.number(), v.gtValue(0), v.description('Seconds one tool call may take (default 30).')), 30),
  max_observation_chars: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(100), v.description('Longest observation the model is shown (default 4000).')),
    4000,
  ),
  trace_file: traceFileEntry,
  ...modelEntries,
})

type Params = v.InferOutput<typeof params>

export interface StepRecord {
  step: number
  thought: string
  action: string
  action_input: unknown
  observation?: string
  /** The model's reply as written, so a resumed loop shows the model exactly what it said. */
  reply: string
}

/** What one finished step leaves in the store: the step and its trace entry (a record per step, so each
 * checkpoint costs the same however long the loop has run). */
interface SavedStep {
  record: StepRecord
  /** When the step was traced, and by which model: the rest of its trace entry is the record. */
  timestamp: number
  model: string
}

export const reactAction = defineAction({
  name: 'reason.react',
  description:
    'ReAct loop: the model thinks, runs one of the listed tools (actions), reads the observation, until it finishes or max_steps; returns {final_answer, steps, reasoning_trace}.',
  params,
  refers: { action: ['tools'] },
  run: (p, ctx) => react(p, ctx),
})

async function react(p: Params, ctx: ActionContext): Promise<State> {
  const toolbox = await Toolbox.open(ctx, p.tools)
  const checkpoints = new StepCheckpoints(ctx)
  const saved = await checkpoints.load()
  const steps = saved.map((s) => s.record)
  const tracer = new Tracer(
    ctx,
    'reason.react',
    p.trace_file,
    saved.map((s, i) => traceEntry(s.record, s.model, i + 1, s.timestamp)),
  )
  const messages: ChatMessage[] = [
    { role: 'system', content: reactPrompt(toolbox.lines()) },
    { role: 'user', content: `Goal: ${p.goal}` },
  ]
  for (const s of steps) messages.push(...turn(s))
  const observationLimit = p.max_observation_chars
  let checkpoint: Promise<void> = Promise.resolve()
  let final: { answer: unknown } | undefined
  let model = ''

  for (let n = steps.length + 1; n <= p.max_steps && !final; n++) {
    const reply = await ask(ctx, p, messages, p.native_tools ? { tools: toolbox.native() } : { schema: REACT_SCHEMA })
    model = reply.model
    const read = readStep(reply, p.native_tools)
    let record: StepRecord
    if (!read.ok) {
      record = { step: n, thought: '', action: '', action_input: null, reply: reply.content, observation: read.correction }
    } else if (isTerminalAction(read.step.action)) {
      record = { step: n, ...stepFields(read.step), reply: reply.content }
      final = { answer: read.step.answer ?? null }
    } else {
      const lookup = toolbox.lookup(read.step.action)
      let observation: string
      if (!lookup.ok) observation = `Error: ${lookup.reason}`
      else {
        await checkpoint // step n-1 is on disk before step n changes anything
        const r = await toolbox.run(ctx, lookup.tool, read.step.action_input, ctx.state, p.tool_timeout * 1000)
        observation = r.ok ? observationText(r.value, observationLimit) : `Error: ${String(r.value)}`
      }
      record = { step: n, ...stepFields(read.step), reply: reply.content, observation }
    }
    steps.push(record)
    messages.push(...turn(record))
    const entry = tracer.add('react_step', { ...withoutReply(record), model })
    await checkpoint
    checkpoint = checkpoints.save(n, { record, timestamp: entry.timestamp, model })
  }
  await checkpoint
  await checkpoints.clear(steps.length)
  const shown = steps.map(withoutReply)
  const answer = final ? final.answer : null
  return {
    final_answer: answer,
    reasoning_answer: answer,
    steps: shown,
    react_steps: shown,
    total_steps: shown.length,
    stop_reason: final ? 'finish' : 'max_steps',
    reasoning_trace: await tracer.finish(),
    ...(model && { model }),
  }
}

/** The finished steps of this node's loop in this run, one store record each, in the store's memory. */
class StepCheckpoints {
  private readonly namespace: string

  constructor(private readonly ctx: ActionContext) {
    this.namespace = `reason.react:${ctx.runId}:${ctx.node}`
  }

  async load(): Promise<SavedStep[]> {
    const keys = await this.ctx.store.memoryList(this.namespace, 'step:')
    const steps: SavedStep[] = []
    for (const key of keys.sort()) {
      const got = await this.ctx.store.memoryGet(this.namespace, key)
      if (got.found) steps.push(got.value as SavedStep)
    }
    return steps
  }

  save(n: number, step: SavedStep): Promise<void> {
    return this.ctx.store.memoryPut(this.namespace, key(n), step)
  }

  async clear(count: number): Promise<void> {
    // Issued together: the store commits writes of one turn in one transaction.
    await Promise.all(Array.from({ length: count }, (_, i) => this.ctx.store.memoryDelete(this.namespace, key(i + 1))))
  }
}

const key = (n: number): string => `step:${String(n).padStart(6, '0')}`

/** A step's trace entry, as Tracer.add made it. */
function traceEntry(record: StepRecord, model: string, index: number, timestamp: number): TraceEntry {
  return { ...(withoutNul({ ...withoutReply(record), model }) as Record<string, unknown>), step: 'react_step', index, timestamp }
}

type Read = { ok: true; step: ReactStep } | { ok: false; correction: string }

function readStep(reply: Reply, native: boolean): Read {
  const call = reply.toolCalls?.[0]
  if (native && call) {
    const action = fromNativeName(call.name)
    const step: ReactStep = { thought: reply.content.trim(), action, action_input: call.arguments }
    if (isTerminalAction(action)) step.answer = call.arguments.answer ?? call.arguments
    return { ok: true, step }
  }
  try {
    return { ok: true, step: parseReactStep(reply.content) }
  } catch (e) {
    if (!isTeaError(e, 'REASONING_PARSE_ERROR')) throw e
    // With native tools, a reply without a tool call is the model's answer.
    if (native && reply.content.trim())
      return { ok: true, step: { thought: '', action: 'finish', action_input: null, answer: reply.content.trim() } }
    return {
      ok: false,
      correction:
        `Error: your reply is not a step (${errorMessage(e).split('\n')[0]}). Reply with one JSON object: ` +
        '{"thought": "…", "action": "<a tool name>", "action_input": {…}}, or action "finish" with {"answer": …}.',
    }
  }
}

function stepFields(s: ReactStep): Pick<StepRecord, 'thought' | 'action' | 'action_input'> {
  return { thought: s.thought, action: s.action, action_input: s.action_input ?? null }
}

/** A finished step as the model sees it next turn: what it said, then what came of it. */
function turn(s: StepRecord): ChatMessage[] {
  const said: ChatMessage = { role: 'assistant', content: s.reply || JSON.stringify(stepFields(s)) }
  return s.observation === undefined ? [said] : [said, { role: 'user', content: `Observation: ${s.observation}` }]
}

function withoutReply(s: StepRecord): Omit<StepRecord, 'reply'> {
  const { reply: _reply, ...rest } = s
  return rest
}

function observationText(value: unknown, limit: number): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null')
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length - limit} more characters cut)`
}
