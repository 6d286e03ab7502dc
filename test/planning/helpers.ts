/**
 * Planning test helpers: a scripted model client (answers in order, records every request — the MockLlmClient of
 * the test design), a context around it with a memory store, and a quick plan builder.
 */

import { builtinActions } from '../../src/actions/builtins.ts'
import type { LlmClient, LlmRequest, LlmResult } from '../../src/llm/types.ts'
import { actions as planningActions } from '../../src/planning/index.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import type { Store } from '../../src/store/types.ts'
import { newSubtask } from '../../src/planning/types.ts'
import type { Plan, Subtask, SubtaskStatus } from '../../src/planning/types.ts'
import { testContext } from '../actions/context.ts'
import type { TestContext, TestContextOverrides } from '../actions/context.ts'

export interface ScriptedLlm extends LlmClient {
  requests: LlmRequest[]
}

/** Each reply is a string (the content) or an Error to throw; the model reported is the request's. */
export function scriptedLlm(replies: Array<string | Error>, model = 'ollama:planner'): ScriptedLlm {
  const requests: LlmRequest[] = []
  return {
    requests,
    async call(request) {
      requests.push(request)
      const next = replies.shift()
      if (next === undefined) throw new Error(`scripted model: no reply left for call ${requests.length}`)
      if (next instanceof Error) throw next
      const result: LlmResult = {
        content: next,
        model: request.model ?? model,
        usage: { prompt_tokens: 1, completion_tokens: 1 },
        attempts: 1,
      }
      return result
    },
    close: async () => {},
  }
}

export function planningContext(llm: LlmClient, overrides: TestContextOverrides & { store?: Store } = {}): TestContext {
  return testContext({ llm, store: createMemoryStore(), listActions: () => [...builtinActions(), ...planningActions()], ...overrides })
}

export function plan(rows: Array<[string, string[], SubtaskStatus?, unknown?]>, extra: Partial<Plan> = {}): Plan {
  const subtasks: Subtask[] = rows.map(([id, deps, status, result]) => {
    const s = newSubtask({ id, description: `do ${id}`, dependencies: deps })
    if (status) s.status = status
    if (result !== undefined) s.result = result
    return s
  })
  return { id: 'plan_test', goal: 'test goal', strategy: 'flat', subtasks, replan_count: 0, max_replans: 3, created_at: 0, ...extra }
}

export const reply = (subtasks: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ subtasks, ...extra })
