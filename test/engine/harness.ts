/**
 * Runs agent YAML through the real loader, compiler and run loop against an in-memory store, with a few test
 * actions added to the real registry. The model client refuses every call unless a test hands in one (a real
 * client pointed at the fake model server: the reasoning tests).
 */

import * as v from 'valibot'
import { TeaError } from '../../src/core/errors.ts'
import type { RunEvent } from '../../src/core/events.ts'
import type { Registry } from '../../src/actions/registry.ts'
import { defineAction, type Action } from '../../src/actions/types.ts'
import { loadAgentText } from '../../src/agent/load.ts'
import { formatProblem } from '../../src/agent/problems.ts'
import type { AgentSpec } from '../../src/agent/types.ts'
import { resumeRun, startRun, type RunResult } from '../../src/engine/lifecycle.ts'
import { buildRegistry } from '../../src/features.ts'
import type { LlmClient } from '../../src/llm/types.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import type { Store } from '../../src/store/types.ts'

export const calls: Record<string, number> = {}

export function testActions(): Action[] {
  return [
    defineAction({
      name: 'test.echo',
      description: 'returns its params',
      params: v.record(v.string(), v.unknown()),
      run: (p) => p,
    }),
    defineAction({
      name: 'test.count',
      description: 'counts calls per key and returns the count',
      params: v.object({ key: v.string() }),
      run: ({ key }) => ({ [key]: (calls[key] = (calls[key] ?? 0) + 1) }),
    }),
    defineAction({
      name: 'test.flaky',
      description: 'fails until called `succeed_after` times for `key`',
      params: v.object({ key: v.string(), succeed_after: v.number() }),
      run: ({ key, succeed_after }) => {
        const n = (calls[key] = (calls[key] ?? 0) + 1)
        if (n <= succeed_after) throw new TeaError('HTTP_ERROR', `flaky failure ${n}`)
        return { flaky_ok: n }
      },
    }),
    defineAction({
      name: 'test.sleep',
      description: 'waits ms, honouring the signal',
      params: v.object({ ms: v.number() }),
      run: ({ ms }, ctx) =>
        new Promise((resolve, reject) => {
          const t = setTimeout(() => resolve({ slept: ms }), ms)
          ctx.signal.addEventListener('abort', () => (clearTimeout(t), reject(ctx.signal.reason)), { once: true })
        }),
    }),
  ]
}

export function testRegistry(): Registry {
  return buildRegistry(testActions())
}

export const noModel: LlmClient = {
  call: async () => {
    throw new TeaError('LLM_UNREACHABLE', 'engine tests have no model')
  },
  close: async () => {},
}

export function load(yaml: string, registry = testRegistry()): AgentSpec {
  const { spec, problems } = loadAgentText(yaml, '/tmp/agent.yaml', registry)
  if (!spec) throw new Error(`agent invalid:\n${problems.map((p) => formatProblem('agent.yaml', p)).join('\n')}`)
  return spec
}

export interface Ran extends RunResult {
  events: RunEvent[]
  store: Store
}

/** Starts (or with `resume`, resumes) a run through the engine's run lifecycle, as the CLI does. */
export async function run(
  yaml: string | AgentSpec,
  options: {
    input?: Record<string, unknown>
    store?: Store
    runId?: string
    resume?: boolean
    signal?: AbortSignal
    registry?: Registry
    /** The model client (default: one that refuses every call). */
    llm?: LlmClient
  } = {},
): Promise<Ran> {
  const registry = options.registry ?? testRegistry()
  const spec = typeof yaml === 'string' ? load(yaml, registry) : yaml
  const store = options.store ?? createMemoryStore()
  const runId = options.runId ?? 'run-1'
  const events: RunEvent[] = []
  const services = {
    store,
    registry,
    llm: options.llm ?? noModel,
    emit: (e: RunEvent) => void events.push(e),
    ...(options.signal && { signal: options.signal }),
  }
  const result = options.resume
    ? await resumeRun(services, { runId, load: () => spec })
    : await startRun(spec, services, { runId, ...(options.input && { input: options.input }) })
  return { ...result, events, store }
}

export function nodesRun(events: RunEvent[]): string[] {
  return events.filter((e) => e.type === 'node_end').map((e) => (e as { node: string }).node)
}
