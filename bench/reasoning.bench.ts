/**
 * The reasoning feature's own costs, without model time:
 *
 * 1. A ReAct step outside the model call: parse the reply, look up and run the tool (json.parse through the
 *    registry), record the trace entry and event, and checkpoint the step — as the slope between a 1-step and a
 *    201-step loop through the run lifecycle, on the in-memory store and on LMDB (fsynced). The model is an
 *    in-process client that answers after a fixed delay (0 ms, and 2 ms to show the checkpoint's fsync hidden
 *    behind the model's time, as it is on a board where a call takes seconds); the time measured inside the model is subtracted.
 * 2. reason.decompose's speed-up on the worker pool for CPU-bound solvers: 8 sub-problems, each ~260 ms of
 *    JavaScript, with 1 and with 2 worker threads, the workers loading the built bundle as users run them
 *    (`node build.mjs` first; from source each worker would spend ~0.6 s compiling TypeScript).
 * 3. Parse throughput of the reply readers on a mix of small-model replies.
 *
 *   npx tsx bench/reasoning.bench.ts [--rounds 7]
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
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

/** Time spent inside the model's calls, measured (a timer's delay is never exactly what was asked). */
let modelMs = 0

/** A model that takes a step with json.parse until `steps` replies were given, then finishes. */
function reactModel(steps: number, delayMs: number): LlmClient {
  let n = 0
  const step = JSON.stringify({ thought: 'parse it', action: 'json.parse', action_input: { text: '{"a": [1, 2, 3]}' } })
  const done = JSON.stringify({ thought: 'done', action: 'finish', action_input: { answer: 'ok' } })
  return {
    async call() {
      const t = performance.now()
      if (delayMs) await sleep(delayMs)
      modelMs += performance.now() - t
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
  modelMs = 0
  const t = performance.now()
  const r = await startRun(spec!, { store, registry, llm: reactModel(steps, delayMs) }, { runId: id })
  if (r.state.total_steps !== steps) throw new Error(`expected ${steps} steps, got ${String(r.state.total_steps)}: ${r.error?.message}`)
  return performance.now() - t - modelMs
}

const STEPS = 201
console.log(`ReAct loop, per step outside the model (slope between a 1-step and a ${STEPS}-step loop, median of ${ROUNDS}):\n`)
console.log('| runtime, checkpoints | model answers | per step |')
console.log('| --- | --- | --- |')
const rows: Array<[string, number[]]> = []
for (const kind of ['memory', 'lmdb'] as const) {
  for (const delayMs of [0, 2]) {
    const slopes: number[] = []
    for (let round = 0; round < ROUNDS + 2; round++) {
      const dir = mkdtempSync(join(tmpdir(), 'tea-react-bench-'))
      const store = kind === 'lmdb' ? openLmdbStore(dir) : createMemoryStore()
      const few = await reactRun(1, store, `a${round}`, delayMs)
      const many = await reactRun(STEPS, store, `b${round}`, delayMs)
      await store.close()
      rmSync(dir, { recursive: true, force: true })
      if (round >= 2) slopes.push(((many - few) / (STEPS - 1)) * 1000)
    }
    const label = `tea, ${kind === 'lmdb' ? 'LMDB (fsynced)' : 'in-memory store'}`
    console.log(`| ${label} | ${delayMs ? `after ${delayMs} ms` : 'at once'} | ${median(slopes).toFixed(1)} µs |`)
    if (delayMs === 0) rows.push([label, slopes])
  }
}
const { langGraphReact } = await import('./langgraph-react.ts')
const peer: number[] = []
for (let round = 0; round < ROUNDS + 2; round++) {
  const few = await langGraphReact(1, round)
  const many = await langGraphReact(STEPS, round)
  if (round >= 2) peer.push(((many - few) / (STEPS - 1)) * 1000)
}
console.log(`| LangGraph.js createReactAgent, MemorySaver | at once | ${median(peer).toFixed(1)} µs |`)
console.log(`\nratio LangGraph / tea (in-memory, both at once): ${(median(peer) / median(rows[0]![1])).toFixed(1)}x`)

/** Decomposes into 4 parts and synthesizes at once; the parts are solved by the code solver. */
const decomposeModel: LlmClient = {
  async call(request: LlmRequest) {
    const system = request.messages[0]?.content ?? ''
    const content = system.includes('You break a hard problem')
      ? JSON.stringify({ sub_problems: [1, 2, 3, 4, 5, 6, 7, 8].map((i) => ({ description: `part ${i}` })) })
      : JSON.stringify({ final_answer: 'combined' })
    return { content, model: 'bench:model', usage: { prompt_tokens: 0, completion_tokens: 0 }, attempts: 1 }
  },
  close: async () => {},
}

const bundle = join(import.meta.dirname, '..', 'dist', 'linux-x64', 'tea.cjs')
if (!existsSync(bundle)) throw new Error(`build first: node build.mjs --target linux-x64 (${bundle} is missing)`)
process.env.TEA_WORKER_FILE = bundle

// ~260 ms of arithmetic on this machine per sub-problem.
const burn = 'let x = 0; for (let i = 0; i < 60_000_000; i++) x = (x + i * 7) % 1000003; return x'
const decomposeAgent = (threads: number) => `name: decompose-bench
nodes:
  - name: d
    uses: reason.decompose
    with:
      problem: p
      max_depth: 1
      max_sub_problems: 8
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
  `\nreason.decompose, 8 CPU-bound sub-problems on the pool: 1 thread ${one.toFixed(0)} ms, 2 threads ${two.toFixed(0)} ms, speed-up ${(one / two).toFixed(2)}x (medians of ${times[1]!.length}; includes worker start-up)`,
)

// 3. Parse throughput on a realistic mix of small-model replies (each reader on every reply).
const { parseCot, parseReactStep } = await import('../src/reasoning/parse.ts')
const mix = [
  '{"thinking": "Step 1: 6 * 7 = 42.", "answer": 42}',
  'Sure! Here is my answer:\n```json\n{"thinking": "The capital of France is Paris.", "answer": "Paris"}\n```',
  '<thinking>\nFirst, add the two numbers.\nThen check.\n</thinking>\nAnswer: 5',
  '{"thought": "I need the page.", "action": "web.scrape", "action_input": {"url": "http://127.0.0.1/"}}',
  'Thought: I should look it up.\nAction: memory.get\nAction Input: {"key": "hours"}',
  '{"thinking": "cut off after the answer", "answer": "Lyon", "conf',
  'I am not sure what you mean.',
]
for (const [name, read] of [
  ['parseCot', parseCot],
  ['parseReactStep', parseReactStep],
] as const) {
  const rates: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const n = 20_000
    const t = performance.now()
    for (let i = 0; i < n; i++) {
      try {
        read(mix[i % mix.length]!)
      } catch {
        // a refused reply costs what it costs
      }
    }
    rates.push(n / ((performance.now() - t) / 1000))
  }
  console.log(`${name}: ${Math.round(median(rates)).toLocaleString('en')} replies/s (median of ${ROUNDS}; ${mix.length}-reply mix)`)
}
