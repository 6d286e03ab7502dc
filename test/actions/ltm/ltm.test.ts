/**
 * Issue 10 item 8: TEA's long-term memory (`settings.ltm`, `ltm.*`) on tea's store, with TEA's result shapes; a
 * backend that needs a database service is a load warning and its `ltm.*` nodes fail with TEA_UNSUPPORTED.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../../src/agent/load.ts'
import { buildRegistry } from '../../../src/features.ts'
import { createMemoryStore } from '../../../src/store/memory-store.ts'
import { run } from '../../engine/harness.ts'

const AGENT = `name: ltm
settings:
  ltm: { backend: sqlite, path: ./ltm.db }
nodes:
  - name: put
    uses: ltm.store
    with: { key: "{{ state.k }}", value: { topic: AI, facts: [LLMs are transformers] }, metadata: { source: web } }
    output: put
  - name: again
    uses: ltm.store
    with: { key: other, value: "pumps and valves", metadata: { source: book } }
    output: again
  - name: get
    uses: ltm.retrieve
    with: { key: "{{ state.k }}" }
    output: got
  - name: miss
    uses: ltm.retrieve
    with: { key: nothing, default: 0 }
    output: miss
  - name: find
    uses: ltm.search
    with: { query: "transformers AI" }
    output: found
  - name: filtered
    uses: ltm.search
    with: { metadata_filter: { source: book }, limit: 5 }
    output: filtered
`

test('10-8 ltm.store, retrieve and search return TEA shapes; entries outlast the run in the store', async () => {
  const store = createMemoryStore()
  const r = await run(AGENT, { store, input: { k: 'knowledge' } })
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  assert.equal(r.state.put, { success: true, stored: true, key: 'knowledge', created: true })
  assert.equal(r.state.got, {
    success: true,
    value: { topic: 'AI', facts: ['LLMs are transformers'] },
    found: true,
    metadata: { source: 'web' },
  })
  assert.equal(r.state.miss, { success: true, value: 0, found: false, metadata: null })
  const found = r.state.found as { results: Array<{ key: string; score: number }>; count: number }
  assert.equal([found.count, found.results.map((x) => x.key)], [1, ['knowledge']])
  assert.ok(found.results[0]!.score > 0, 'a BM25 score, higher is better')
  assert.equal(r.state.filtered, {
    success: true,
    results: [{ key: 'other', value: 'pumps and valves', metadata: { source: 'book' }, score: 0 }],
    count: 1,
  })
  // A second run on the same store: the key exists (created false), and ltm.delete removes it.
  const second = await run(
    `name: ltm2\nnodes:\n  - name: put\n    uses: ltm.store\n    with: { key: knowledge, value: 2 }\n    output: put\n  - name: del\n    uses: ltm.delete\n    with: { key: knowledge }\n    output: del\n  - name: get\n    uses: ltm.retrieve\n    with: { key: knowledge }\n    output: got\n`,
    { store, runId: 'r2' },
  )
  assert.equal(
    [second.state.put, second.state.del],
    [
      { success: true, stored: true, key: 'knowledge', created: false },
      { success: true, deleted: true, key: 'knowledge' },
    ],
  )
  assert.is((second.state.got as { found: boolean }).found, false)
})

test('10-8 a backend that needs a service is a warning naming it (its ${VAR}s not required), and an ltm.* node fails with TEA_UNSUPPORTED', async () => {
  const yaml =
    'name: h\nsettings:\n  ltm: { backend: hierarchical, catalog: { url: "${NO_SUCH_DB_URL}" } }\nnodes:\n  - name: put\n    uses: ltm.store\n    with: { key: a, value: 1 }\n'
  const loaded = loadAgentText(yaml, '/tmp/h.yaml', buildRegistry(), { env: {} })
  assert.equal(loaded.problems, [])
  assert.equal(
    loaded.warnings.map((w) => `${w.where.line} ${w.code} ${w.message}`),
    [
      "3 TEA_UNSUPPORTED 'settings.ltm.backend: hierarchical' is a TEA feature that tea does not provide: it needs a database service; tea keeps long-term memory in its own store (backend: sqlite, duckdb, lmdb or memory)",
    ],
  )
  const r = await run(loaded.spec!)
  assert.is(r.status, 'failed')
  assert.is(r.error?.code, 'TEA_UNSUPPORTED')
  assert.match(String(r.error?.message), "'settings.ltm.backend: hierarchical'")
})

test.run()
