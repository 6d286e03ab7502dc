/**
 * The peer: the same linear graph on LangGraph.js (SPEC §4, research/perf-anchors.md §2a). A StateGraph with two
 * last-value channels (`i`, `v`), N nodes each returning the one-key update `{ i: s.i + 1 }`, START → n0 → … →
 * n(N-1) → END; without a checkpointer, and with MemorySaver (default durability). A fresh thread id (and saver)
 * per run, as a new `tea run` starts a new run. Timing is `graph.invoke()` wall time.
 *
 * LangGraph is imported dynamically so that importing this file costs nothing until the peer is measured.
 */

export type LangGraphMode = 'none' | 'memory'

export interface LinearGraph {
  /** Runs the graph once and returns wall ms of `invoke` and the final `i`. */
  invoke(mode: LangGraphMode, runIndex: number): Promise<{ ms: number; i: number }>
  compileMs: number
}

export async function buildLinearGraph(n: number): Promise<LinearGraph> {
  const { StateGraph, Annotation, MemorySaver, START, END } = await import('@langchain/langgraph')
  const State = Annotation.Root({ i: Annotation<number>(), v: Annotation<number>() })
  const t0 = performance.now()
  // The builder's node-name types grow with each addNode; the graph is built dynamically, so erase them.
  const g = new StateGraph(State) as unknown as {
    addNode(name: string, fn: (s: { i: number }) => { i: number }): void
    addEdge(from: string, to: string): void
    compile(opts?: { checkpointer?: unknown }): { invoke(input: unknown, config: unknown): Promise<{ i: number }> }
  }
  for (let k = 0; k < n; k++) g.addNode(`n${k}`, (s) => ({ i: s.i + 1 }))
  g.addEdge(START, 'n0')
  for (let k = 1; k < n; k++) g.addEdge(`n${k - 1}`, `n${k}`)
  g.addEdge(`n${n - 1}`, END)
  const plain = g.compile()
  const compileMs = performance.now() - t0
  return {
    compileMs,
    async invoke(mode, runIndex) {
      const graph = mode === 'none' ? plain : g.compile({ checkpointer: new MemorySaver() })
      const config = { recursionLimit: n + 10, configurable: { thread_id: `bench-${n}-${mode}-${runIndex}` } }
      const t = performance.now()
      const out = await graph.invoke({ i: 0, v: 0 }, config)
      return { ms: performance.now() - t, i: out.i }
    },
  }
}
