/**
 * Writes cassette.jsonl for this example: the exchanges `tea run agent.yaml --replay cassette.jsonl` asks for,
 * built with the same prompt builders plan.decompose and plan.execute use, so the cassette follows the prompts.
 * Run after changing a planning prompt:  npx tsx examples/plan-breakfast/make-cassette.ts
 * (test/planning/example.test.ts fails while the cassette is stale).
 */

import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { decomposeMessages, subtaskPrompt } from '../../src/planning/prompts.ts'
import { flatReplySchema } from '../../src/planning/reply-schemas.ts'

export const MODEL = 'ollama:qwen2.5:1.5b'
export const GOAL = 'Prepare breakfast'

const PLAN = {
  subtasks: [
    { id: 'toast', description: 'Toast two slices of bread', dependencies: [] as string[] },
    { id: 'eggs', description: 'Scramble two eggs', dependencies: [] as string[] },
    { id: 'coffee', description: 'Brew a cup of coffee', dependencies: ['toast'] },
  ],
}

const RESULTS: Record<string, string> = {
  toast: 'Two slices of toast, golden brown and buttered.',
  eggs: 'Two eggs scrambled softly with a pinch of salt.',
  coffee: 'A cup of black coffee, brewed while the toast cooled.',
}

export function cassetteLines(): string[] {
  const usage = { prompt_tokens: 60, completion_tokens: 20 }
  const lines = [
    {
      request: { model: MODEL, messages: decomposeMessages({ goal: GOAL, strategy: 'flat', maxDepth: 3, maxSubtasks: 5 }), format: flatReplySchema() },
      response: { content: JSON.stringify(PLAN), usage },
    },
  ]
  for (const s of PLAN.subtasks) {
    const deps = Object.fromEntries(s.dependencies.map((d) => [d, RESULTS[d]]))
    const { system, prompt } = subtaskPrompt(GOAL, s, deps)
    lines.push({
      request: { model: MODEL, messages: [{ role: 'system', content: system }, { role: 'user', content: prompt }] },
      response: { content: RESULTS[s.id]!, usage },
    } as (typeof lines)[number])
  }
  return lines.map((l) => JSON.stringify(l))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = fileURLToPath(new URL('./cassette.jsonl', import.meta.url))
  writeFileSync(out, `${cassetteLines().join('\n')}\n`)
  console.error(`wrote ${out}`)
}
