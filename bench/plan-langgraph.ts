/**
 * The LangGraph.js side of plan.bench's CPU-bound comparison, in its own process: once a LangGraph graph has been
 * invoked, its AsyncLocalStorage tracking slows every later await in the process (bench/langgraph-contamination.ts),
 * which would tax the tea figures measured beside it.
 * Usage (by plan.bench.ts): tsx bench/plan-langgraph.ts <branches> <iterations> <rounds>  → JSON list of wall ms.
 */

import { setMaxListeners } from 'node:events'
import { Annotation, END, Send, START, StateGraph } from '@langchain/langgraph'

const [n, iters, rounds] = process.argv.slice(2).map(Number) as [number, number, number]
const spin = new Function('state', 'let x = 0; for (let i = 0; i < state.iters; i++) x = (x * 31 + i) | 0; return x') as (s: {
  iters: number
}) => number

// LangGraph adds an abort listener per parallel branch; 100 branches would warn about a leak that is not one.
setMaxListeners(1000)
const S = Annotation.Root({
  n: Annotation<number>(),
  results: Annotation<number[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
})
const g: any = new StateGraph(S)
g.addNode('work', () => ({ results: [spin({ iters })] }))
g.addConditionalEdges(START, (s: { n: number }) => Array.from({ length: s.n }, (_, i) => new Send('work', { i })), ['work'])
g.addEdge('work', END)
const app = g.compile()
const times: number[] = []
for (let r = 0; r < rounds; r++) {
  const t = performance.now()
  const out = await app.invoke({ n }, { recursionLimit: n + 10 })
  times.push(performance.now() - t)
  if (out.results.length !== n) throw new Error(`expected ${n} results, got ${out.results.length}`)
}
process.stdout.write(`${JSON.stringify(times)}\n`)
