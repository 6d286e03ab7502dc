/**
 * The reasoning feature's own costs, without model time:
 *
 * 1. A ReAct step outside the model call: parse the reply, look up and run the tool (json.parse through the
 *    registry), record the trace entry and event, and checkpoint the step — as the slope between a 1-step and a
 *    101-step loop through the run lifecycle, on the in-memory store and on LMDB (fsynced). The model is an
 *    in-process client that answers after a fixed delay (0 ms, and 2 ms to show the checkpoint's fsync hidden
 *    behind the model's time, as it is on a board where a call takes seconds); the delay is subtracted.
 * 2. reason.decompose's speed-up on the worker pool for CPU-bound solvers: 4 sub-problems, each ~150 ms of
 *    JavaScript, with 1 and with 2 worker threads.
 *
 *   npx tsx bench/reasoning.bench.ts [--rounds 7]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadAgentText } from '../src/agent/load.ts'
import { startRun } from '../src/engine/lifecycle.ts'
import { buildRegistry } from '../src/features.ts'
import type { LlmClient, LlmRequest } from '../src/llm/types.ts'
import { openLmdbStore } from '../src/store/lmdb-store.ts'
import { createMemoryStore } from '../src/store/memory-store.ts'
import type { Store } from '../src/store/types.ts'

const ROUNDS = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 7
const registry = buildRegistry()
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A model that takes a step with json.parse until `steps` replies were given, then finishes. */
function reactModel(steps: number, delayMs: number): LlmClient {
  let n = 0
  const step = JSON.stringify({ thought: 'parse it', action: 'json.parse', action_input: { text: '{"a": [1, 2, 3]}' } })
  const done = JSON.stringify({ thought: 'done', action: 'finish', action_input: { answer: 'ok' } })
  return {
    async call() {
      if (delayMs) await sleep(delayMs)
      const content = ++n < steps ? step : done
      return { content, model: 'bench:model', usage: { prompt_tokens: 0, completion_tokens: 0 }, attempts: 1 }
    },
    close: async () => {},
  }
}

const reactAgent = (steps: number) => `name: react-bench
nodes:
  - name: loop
    uses: reason.react
    with: { goal: bench, tools: [json.parse], max_steps: ${steps} }
    goto: __end__
`

async function reactRun(steps: number, store: Store, id: string, delayMs: number): Promise<number> {
  const { spec } = loadAgentText(reactAgent(steps), join(tmpdir(), 'react-bench.yaml'), registry)
  const t = performance.now()
  const r = await startRun(spec!, { store, registry, llm: reactModel(steps, delayMs) }, { runId: id })
  if (r.state.total_steps !== steps) throw new Error(`expected ${steps} steps, got ${String(r.state.total_steps)}: ${r.error?.message}`)
  return performance.now() - t - steps * delayMs
}

console.log('| store | model delay | per ReAct step, excluding model time |')
console.log('| --- | --- | --- |')
for (const kind of ['memory', 'lmdb'] as const) {
  for (const delayMs of [0, 2]) {
    const slopes: number[] = []
    for (let round = 0; round < ROUNDS + 2; round++) {
      const dir = mkdtempSync(join(tmpdir(), 'tea-react-bench-'))
      const store = kind === 'lmdb' ? openLmdbStore(dir) : createMemoryStore()
      const few = await reactRun(1, store, `a${round}`, delayMs)
      const many = await reactRun(101, store, `b${round}`, delayMs)
      await store.close()
      rmSync(dir, { recursive: true, force: true })
      if (round >= 2) slopes.push(((many - few) / 100) * 1000)
    }
    console.log(
      `| ${kind === 'lmdb' ? 'LMDB, fsynced' : 'in-memory'} | ${delayMs} ms | ${median(slopes).toFixed(1)} µs (median of ${ROUNDS}) |`,
    )
  }
}

/** Decomposes into 4 parts and synthesizes at once; the parts are solved by the code solver. */
const decomposeModel: LlmClient = {
  async call(request: LlmRequest) {
    const system = request.messages[0]?.content ?? ''
    const content = system.includes('You break a hard problem')
      ? JSON.stringify({ sub_problems: [1, 2, 3, 4].map((i) => ({ description: `part ${i}` })) })
      : JSON.stringify({ final_answer: 'combined' })
    return { content, model: 'bench:model', usage: { prompt_tokens: 0, completion_tokens: 0 }, attempts: 1 }
  },
  close: async () => {},
}

// ~150 ms of arithmetic on this machine per sub-problem.
const burn = 'let x = 0; for (let i = 0; i < 60_000_000; i++) x = (x + i * 7) % 1000003; return x'
const decomposeAgent = (threads: number) => `name: decompose-bench
nodes:
  - name: d
    uses: reason.decompose
    with:
      problem: p
      max_depth: 1
      concurrency: ${threads}
      solver: { run: "${burn}" }
    goto: __end__
`

async function decomposeRun(threads: number, id: string): Promise<number> {
  const { spec } = loadAgentText(decomposeAgent(threads), join(tmpdir(), 'decompose-bench.yaml'), registry)
  const t = performance.now()
  const r = await startRun(spec!, { store: createMemoryStore(), registry, llm: decomposeModel }, { runId: id })
  if (r.status !== 'completed') throw new Error(`decompose failed: ${r.error?.message}`)
  return performance.now() - t
}

const times: Record<number, number[]> = { 1: [], 2: [] }
for (let round = 0; round < Math.max(3, Math.ceil(ROUNDS / 2)) + 1; round++) {
  for (const threads of [1, 2]) {
    const ms = await decomposeRun(threads, `d${threads}-${round}`)
    if (round > 0) times[threads]!.push(ms)
  }
}
const one = median(times[1]!)
const two = median(times[2]!)
console.log(
  `\nreason.decompose, 4 CPU-bound sub-problems on the pool: 1 thread ${one.toFixed(0)} ms, 2 threads ${two.toFixed(0)} ms, speed-up ${(one / two).toFixed(2)}x (medians of ${times[1]!.length}; includes worker start-up)`,
)
