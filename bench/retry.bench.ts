/**
 * retry.loop's own cost per attempt (one validation + one correction), without model time: a validator action
 * that fails until the correction node has run `n` times, and a `run:` correction node. Measured through the run
 * lifecycle on the in-memory store and on LMDB (each attempt checkpoints its progress twice).
 *
 *   npx tsx bench/retry.bench.ts [--rounds 7]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as v from 'valibot'
import { defineAction } from '../src/actions/types.ts'
import { loadAgentText } from '../src/agent/load.ts'
import { TeaError } from '../src/core/errors.ts'
import { startRun } from '../src/engine/lifecycle.ts'
import { buildRegistry } from '../src/features.ts'
import type { LlmClient } from '../src/llm/types.ts'
import { openLmdbStore } from '../src/store/lmdb-store.ts'
import { createMemoryStore } from '../src/store/memory-store.ts'
import type { Store } from '../src/store/types.ts'

const ROUNDS = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 7
const validator = defineAction({
  name: 'bench.until',
  description: 'valid once state.fixes reaches n',
  params: v.object({ fixes: v.number(), n: v.number() }),
  run: ({ fixes, n }) => ({ valid: fixes >= n, errors: fixes >= n ? [] : [{ type: 'bench', message: `only ${fixes}` }] }),
})
const registry = buildRegistry([validator])
const noModel: LlmClient = { call: async () => Promise.reject(new TeaError('LLM_UNREACHABLE', 'no model')), close: async () => {} }
const agent = (n: number) => `name: retry-bench
initial_state: { fixes: 0 }
nodes:
  - name: loop
    uses: retry.loop
    with: { validate: bench.until, validate_args: { fixes: "{{ state.fixes }}", n: ${n} }, correct: fix, max_retries: ${n} }
    goto: __end__
  - name: fix
    run: "return { fixes: state.fixes + 1 }"
`

async function timed(n: number, store: Store, id: string): Promise<number> {
  const { spec } = loadAgentText(agent(n), join(tmpdir(), 'retry-bench.yaml'), registry)
  const t = performance.now()
  const r = await startRun(spec!, { store, registry, llm: noModel }, { runId: id })
  if (r.state.fixes !== n) throw new Error(`expected ${n} fixes, got ${String(r.state.fixes)}`)
  return performance.now() - t
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
for (const kind of ['memory', 'lmdb'] as const) {
  const slopes: number[] = []
  for (let round = 0; round < ROUNDS + 2; round++) {
    const dir = mkdtempSync(join(tmpdir(), 'tea-retry-bench-'))
    const store = kind === 'lmdb' ? openLmdbStore(dir) : createMemoryStore()
    const few = await timed(1, store, `a${round}`)
    const many = await timed(101, store, `b${round}`)
    await store.close()
    rmSync(dir, { recursive: true, force: true })
    if (round >= 2) slopes.push(((many - few) / 100) * 1000)
  }
  console.log(
    `| ${kind === 'lmdb' ? 'LMDB, fsynced' : 'in-memory store'} | ${median(slopes).toFixed(1)} µs per attempt (validation + correction + 2 progress checkpoints), median of ${ROUNDS} |`,
  )
}
