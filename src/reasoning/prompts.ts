/**
 * The prompts of the reasoning actions, and the JSON Schemas of the replies they ask for. Written for small local
 * models: short, one instruction per line, the exact JSON shape spelled out, and a text fallback named for a model
 * that will not write JSON.
 */

import type { JsonSchema } from '../llm/types.ts'

export const THINKING_FORMATS = ['step_by_step', 'pros_cons', 'tree', 'first_principles'] as const
export type ThinkingFormat = (typeof THINKING_FORMATS)[number]

const THINKING: Record<ThinkingFormat, string> = {
  step_by_step: [
    'Think step by step:',
    '1. Name what the problem gives and what it asks.',
    '2. Work through it one step at a time, showing each step.',
    '3. Check the result, then state the answer.',
  ].join('\n'),
  pros_cons: [
    'List pros and cons:',
    '1. List the arguments for each option (pros).',
    '2. List the arguments against each option (cons).',
    '3. Weigh them against each other and state the conclusion.',
  ].join('\n'),
  tree: [
    'Reason as a tree:',
    '1. Split the problem into branches, one per line of approach.',
    '2. Follow each branch to its end, noting where it leads.',
    '3. Prune the branches that fail and combine what the others found into the answer.',
  ].join('\n'),
  first_principles: [
    'Reason from first principles:',
    '1. State the basic facts that are certainly true here.',
    '2. Build up from them, questioning every assumption.',
    '3. Derive the answer from those facts alone.',
  ].join('\n'),
}

export interface FewShot {
  problem: string
  thinking: string
  answer: unknown
}

const show = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value))

/** The system prompt of `reason.cot`: the thinking format, the reply's shape, and any worked examples. */
export function cotPrompt(format: ThinkingFormat, examples: readonly FewShot[] = []): string {
  const lines = [
    'You solve problems by reasoning carefully before you answer.',
    '',
    THINKING[format],
    '',
    'Reply with one JSON object and nothing else:',
    '{"thinking": "<your reasoning>", "answer": <the final answer: text, a number, or JSON>}',
    'If you cannot write JSON, write your reasoning between <thinking> and </thinking>, then a line "Answer: <the answer>".',
  ]
  if (examples.length > 0) {
    lines.push('', 'Examples:')
    examples.forEach((e, i) => {
      lines.push('', `Example ${i + 1}`, `Problem: ${e.problem}`, `Thinking: ${e.thinking.trim()}`, `Answer: ${show(e.answer)}`)
    })
  }
  return lines.join('\n')
}

export const COT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { thinking: { type: 'string' }, answer: {} },
  required: ['thinking', 'answer'],
}

export interface ToolLine {
  name: string
  description: string
  parameters: unknown
}

/** The system prompt of `reason.react` (the text protocol): the tools, the step format, how to finish. */
export function reactPrompt(tools: readonly ToolLine[]): string {
  const list =
    tools.length === 0
      ? '(none: answer from what you know)'
      : tools.map((t) => `- ${t.name}: ${t.description}\n  parameters: ${JSON.stringify(t.parameters)}`).join('\n')
  return [
    'You reach a goal in steps. In each step you think, then either use one tool or give the final answer.',
    'After a tool step you are told what the tool returned (the observation); use it in your next step.',
    '',
    'Tools:',
    list,
    '',
    'Reply with one JSON object per step and nothing else:',
    '{"thought": "<what you need next and why>", "action": "<a tool name>", "action_input": {<the tool parameters>}}',
    'When you know the answer:',
    '{"thought": "<why you are done>", "action": "finish", "action_input": {"answer": <the final answer>}}',
    'Use only the tools listed, with the parameters they take.',
  ].join('\n')
}

export const REACT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { thought: { type: 'string' }, action: { type: 'string' }, action_input: {} },
  required: ['thought', 'action', 'action_input'],
}

export const GENERATE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { output: {} },
  required: ['output'],
}

export function generatePrompt(): string {
  return [
    'You carry out a task as well as you can.',
    'Reply with one JSON object and nothing else: {"output": <your result: text or JSON>}',
  ].join('\n')
}

export function improvePrompt(task: string, output: unknown, critique: unknown): string {
  return [
    `Task: ${task}`,
    '',
    'Your previous result:',
    show(output),
    '',
    'A reviewer found:',
    show(critique),
    '',
    'Write an improved result that fixes every point the reviewer raised.',
  ].join('\n')
}

export const CRITIQUE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    issues: { type: 'array', items: { type: 'string' } },
    suggestions: { type: 'array', items: { type: 'string' } },
    score: { type: 'number' },
  },
  required: ['issues', 'suggestions'],
}

export function critiquePrompt(instructions: string | undefined): string {
  return [
    'You review the result of a task critically and fairly.',
    instructions?.trim() || 'Find errors, omissions and anything that could be better.',
    '',
    'Reply with one JSON object and nothing else:',
    '{"issues": ["<a problem>", …], "suggestions": ["<how to fix it>", …], "score": <0 to 1, how good the result is>}',
  ].join('\n')
}

export function critiqueRequest(task: string, output: unknown): string {
  return `Task: ${task}\n\nResult to review:\n${show(output)}`
}

export const DECOMPOSE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    sub_problems: {
      type: 'array',
      items: {
        type: 'object',
        properties: { description: { type: 'string' }, complex: { type: 'boolean' } },
        required: ['description'],
      },
    },
  },
  required: ['sub_problems'],
}

export function decomposePrompt(maxSubProblems: number, mayRecurse: boolean): string {
  return [
    `You break a hard problem into at most ${maxSubProblems} smaller sub-problems that can be solved independently.`,
    'Each sub-problem must make sense on its own, without the others.',
    mayRecurse
      ? 'Mark a sub-problem "complex": true only if it is itself too hard to solve in one go.'
      : 'Every sub-problem must be simple enough to solve in one go.',
    '',
    'Reply with one JSON object and nothing else:',
    '{"sub_problems": [{"description": "<a sub-problem>", "complex": false}, …]}',
  ].join('\n')
}

export const SOLVE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { reasoning: { type: 'string' }, answer: {} },
  required: ['answer'],
}

export function solvePrompt(problem: string, subProblem: string): string {
  return [
    `This is part of a larger problem: ${problem}`,
    '',
    `Solve this part only: ${subProblem}`,
    '',
    'Reply with one JSON object and nothing else: {"reasoning": "<how>", "answer": <the answer to this part>}',
  ].join('\n')
}

export const SYNTHESIS_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { reasoning: { type: 'string' }, final_answer: {} },
  required: ['final_answer'],
}

export function synthesisPrompt(problem: string, parts: readonly { problem: string; answer: unknown }[]): string {
  return [
    `Problem: ${problem}`,
    '',
    'It was split into parts, each already solved:',
    ...parts.map((p, i) => `${i + 1}. ${p.problem}\n   Answer: ${show(p.answer)}`),
    '',
    'Combine the answers into the answer to the whole problem.',
    'Reply with one JSON object and nothing else: {"reasoning": "<how the parts combine>", "final_answer": <the answer>}',
  ].join('\n')
}

export function judgePrompt(): string {
  return [
    'You judge whether an output meets its requirements.',
    'Reply with one JSON object and nothing else:',
    '{"valid": true or false, "score": <0 to 1>, "feedback": "<what is wrong, or why it is right>", "suggestions": ["<a fix>", …]}',
  ].join('\n')
}

export const VERDICT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    valid: { type: 'boolean' },
    score: { type: 'number' },
    feedback: { type: 'string' },
    suggestions: { type: 'array', items: { type: 'string' } },
  },
  required: ['valid'],
}
