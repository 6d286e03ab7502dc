/**
 * Issue 33: TEA's cache.wrap, cache.get and cache.invalidate on long-term memory, and ltm.search ranked by BM25
 * with TEA's metadata operators, through the real loader and run loop on a memory store.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createMemoryStore } from '../../../src/store/memory-store.ts'
import { calls, run } from '../../engine/harness.ts'

const CACHE = `name: cached
nodes:
  - name: first
    uses: cache.wrap
    with: { action: test.count, args: { key: cache-1 }, ttl_hours: 1 }
    output: first
  - name: second
    uses: cache.wrap
    with: { action: test.count, args: { key: cache-1 } }
    output: second
  - name: peek
    uses: cache.get
    with: { key: "{{ state.first._cache_key }}", include_metadata: true }
    output: peek
  - name: drop
    uses: cache.invalidate
    with: { pattern: "cache:agent:test.count:*" }
    output: dropped
  - name: third
    uses: cache.wrap
    with: { action: test.count, args: { key: cache-1 } }
    output: third
`

test('cache.wrap runs the action once and answers the second call from the cache; invalidate by pattern empties it', async () => {
  const r = await run(CACHE, { store: createMemoryStore() })
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const s = r.state as Record<string, any>
  assert.equal([s.first.success, s.first._cache_hit, s.first.result], [true, false, { 'cache-1': 1 }])
  assert.match(s.first._cache_key, /^cache:agent:test\.count:[0-9a-f]{64}$/)
  assert.equal([s.second._cache_hit, s.second.result, s.second._cache_key], [true, { 'cache-1': 1 }, s.first._cache_key])
  assert.equal([s.peek.found, s.peek.value, s.peek.expired, s.peek.metadata._cache_type], [true, { 'cache-1': 1 }, false, 'action_result'])
  const ttl = Date.parse(s.peek.metadata._cache_expires_at) - Date.parse(s.peek.metadata._cache_created_at)
  assert.is(ttl, 3600_000)
  assert.equal(s.dropped, { success: true, deleted_count: 1, deleted_keys: [s.first._cache_key] })
  assert.equal([s.third._cache_hit, s.third.result], [false, { 'cache-1': 2 }])
  assert.is(calls['cache-1'], 2)
})

const LTM = `name: ltm-bm25
nodes:
  - name: a
    uses: ltm.store
    with: { key: pump-3, value: "pump 3 needs a new seal; the seal kit is ordered", metadata: { year: 2024, room: plant } }
  - name: b
    uses: ltm.store
    with: { key: pump-4, value: "pump 4 runs fine", metadata: { year: 2025, room: plant } }
  - name: c
    uses: ltm.store
    with: { key: boiler, value: { note: "boiler pressure is low", bar: 0.8 }, metadata: { year: 2025, room: cellar } }
  - name: find
    uses: ltm.search
    with: { query: "seal pump" }
    output: found
  - name: recent
    uses: ltm.search
    with: { query: "pump", metadata_filter: { year_gte: 2025 } }
    output: recent
  - name: structured
    uses: ltm.search
    with: { query: "PRESSURE" }
    output: structured
`

test('ltm.search ranks by BM25 (the entry with more of the rarer words first) and filters with TEA operators', async () => {
  const r = await run(LTM, { store: createMemoryStore() })
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const s = r.state as Record<string, any>
  assert.equal(
    s.found.results.map((e: { key: string }) => e.key),
    ['pump-3', 'pump-4'],
  )
  assert.ok(s.found.results[0].score > s.found.results[1].score)
  assert.equal(
    s.recent.results.map((e: { key: string }) => e.key),
    ['pump-4'],
  )
  assert.equal(s.structured.results[0].value, { note: 'boiler pressure is low', bar: 0.8 })
  assert.is(s.structured.count, 1)
})

test.run()
