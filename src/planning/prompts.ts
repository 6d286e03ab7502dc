/**
 * The words sent to the model. Each builder returns chat messages: a system message that fixes the reply's
 * shape (the same shape the JSON Schema in `format` enforces on servers that support structured output), and a
 * user message with the goal and context. A `prompt_template` replaces the user message only, so the reply
 * format stays under our control.
 */

import type { ChatMessage } from '../llm/types.ts'
import type { PlanStrategy, Subtask } from './types.ts'

const RESULT_PREVIEW = 500
const DONE_PREVIEW = 200

export interface DecomposePromptInput {
  goal: string
  strategy: PlanStrategy
  maxDepth: number
  maxSubtasks: number
  /** Iterative strategy: the steps planned so far, with results when a run has them. */
  planned?: ReadonlyArray<{ id: string; description: string; result?: unknown }>
  /** A rendered `prompt_template`, used as the user message. */
  userMessage?: string
}

const SHAPE = `Reply with JSON only, no prose: {"subtasks": [{"id": "1", "description": "…", "dependencies": []}]}.
"dependencies" lists the ids of subtasks that must finish before this one; it must only name ids from the plan and
must not form a cycle. Subtasks without a dependency between them may run at the same time.`

export function decomposeMessages(input: DecomposePromptInput): ChatMessage[] {
  const system = systemFor(input)
  const user = input.userMessage ?? userFor(input)
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ]
}

function systemFor(input: DecomposePromptInput): string {
  switch (input.strategy) {
    case 'flat':
      return `You break a goal into concrete, atomic subtasks (at most ${input.maxSubtasks}; usually 3 to 10).
${SHAPE}`
    case 'hierarchical':
      return `You break a goal into phases, and phases into smaller subtasks, at most ${input.maxDepth} levels deep and at most
${input.maxSubtasks} subtasks in total. A subtask may hold its own "subtasks" list. A dependency may name a phase
(meaning all of it) or a single subtask.
${SHAPE.replace('"dependencies": []}', '"dependencies": [], "subtasks": [ … ]}')}`
    case 'iterative':
      return `You plan a goal step by step. Given the steps planned so far, propose the next 1 to 3 subtasks, or none when the
goal is fully covered. Set "planning_complete" to true when no more steps are needed.
Reply with JSON only: {"subtasks": [{"id": "…", "description": "…", "dependencies": []}], "planning_complete": false}.
New ids must differ from the ids planned so far; "dependencies" may name any planned id.`
  }
}

function userFor(input: DecomposePromptInput): string {
  const lines = [`Goal: ${input.goal}`]
  if (input.strategy === 'iterative') {
    if (!input.planned || input.planned.length === 0) lines.push('', 'Nothing is planned yet.')
    else {
      lines.push('', 'Planned so far:')
      for (const s of input.planned)
        lines.push(`- ${s.id}: ${s.description}${s.result === undefined ? '' : ` (result: ${preview(s.result, DONE_PREVIEW)})`}`)
    }
  }
  return lines.join('\n')
}

export interface ReplanPromptInput {
  goal: string
  completed: readonly Subtask[]
  /** The failed and pending subtasks being replaced. */
  replaced: readonly Subtask[]
  failure?: { id: string; error: string }
  maxSubtasks: number
}

export function replanMessages(input: ReplanPromptInput): ChatMessage[] {
  const lines = [`Goal: ${input.goal}`, '']
  if (input.failure) lines.push(`Subtask ${input.failure.id} failed with: ${input.failure.error}`, '')
  lines.push('Completed subtasks (kept as they are; new subtasks may depend on them):')
  if (input.completed.length === 0) lines.push('- none')
  for (const s of input.completed) lines.push(`- ${s.id}: ${s.description} → ${preview(s.result, DONE_PREVIEW)}`)
  lines.push('', 'Subtasks being replaced (failed or not started):')
  for (const s of input.replaced) lines.push(`- ${s.id} [${s.status}]: ${s.description}${s.error ? ` (error: ${s.error})` : ''}`)
  const taken = input.completed.map((s) => s.id).join(', ') || 'none'
  const system = `You revise a plan after a failure. Propose the subtasks that replace the failed and unfinished ones (at most
${input.maxSubtasks}), working around the failure. Do not repeat completed work. Use new ids (taken: ${taken}).
Reply with JSON only: {"subtasks": [{"id": "…", "description": "…", "dependencies": []}], "rationale": "…"}.`
  return [
    { role: 'system', content: system },
    { role: 'user', content: lines.join('\n') },
  ]
}

/** The default executor's call: what `llm.call` gets when `subtask_executor` has no `with:` block. */
export function subtaskPrompt(
  goal: string,
  subtask: { id: string; description: string },
  dependencyResults: Record<string, unknown>,
): { system: string; prompt: string } {
  const lines = [`Goal of the plan: ${goal}`, '', `Your subtask (${subtask.id}): ${subtask.description}`]
  const deps = Object.entries(dependencyResults)
  if (deps.length > 0) {
    lines.push('', 'Results of the subtasks it depends on:')
    for (const [id, r] of deps) lines.push(`- ${id}: ${preview(r, RESULT_PREVIEW)}`)
  }
  return {
    system: 'You carry out one subtask of a larger plan. Reply with the result of this subtask only.',
    prompt: lines.join('\n'),
  }
}

export function preview(value: unknown, max: number): string {
  const text = typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value)
  return text.length > max ? `${text.slice(0, max)}…` : text
}
