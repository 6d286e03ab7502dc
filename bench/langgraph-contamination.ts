/**
 * Why the engine benchmark runs LangGraph.js in its own process: the same tea run (2,000 `bench.set` nodes, no
 * checkpoint writes) measured before LangGraph is imported, after the import, and after one LangGraph invoke.
 * After an invoke, LangGraph's AsyncLocalStorage context tracking stays on process-wide and every await pays
 * for it. Run: npx tsx bench/langgraph-contamination.ts   (µs per node, min and median of 40 runs each)
 */

import { benchRegistry, linearAgentYaml } from './engine-agents.ts'
import { openStore, prepare, timedRun } from './engine-run.ts'
import { median } from './engine-stats.ts'
import { buildLinearGraph } from './langgraph-linear.ts'

async function measure(label: string, p: ReturnType<typeof prepare>): Promise<void> {
  const xs: number[] = []
  for (let r = 0; r < 40; r++) {
    const o = openStore('none')
    const { ms } = await timedRun(p, o.store, `r${r}`)
    await o.close()
    xs.push((ms * 1000) / p.spec.nodes.length)
  }
  process.stdout.write(`| ${label} | ${Math.min(...xs).toFixed(2)} | ${median(xs).toFixed(2)} |\n`)
}

async function main(): Promise<void> {
  const p = prepare(linearAgentYaml('action', 2000), benchRegistry())
  process.stdout.write('| tea, 2,000 action nodes, no writes | min µs/node | median µs/node |\n|---|---|---|\n')
  await measure('warm-up', p)
  await measure('before importing LangGraph', p)
  await import('@langchain/langgraph')
  await measure('after importing LangGraph', p)
  const g = await buildLinearGraph(50)
  await g.invoke('none', 0)
  await measure('after one LangGraph invoke', p)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
