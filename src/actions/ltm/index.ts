/**
 * TEA's long-term memory (`ltm.store`, `ltm.retrieve`, `ltm.delete`, `ltm.search`) on tea's own store: the entries
 * live in the memory of the store (`--data-dir`, LMDB), in a namespace of their own, so they outlast the run and
 * the process as TEA's do. Results have TEA's shapes (`{success, stored, key, created}`, `{success, value, found,
 * metadata}`, `{success, deleted, key}`, `{success, results: [{key, value, metadata, score}], count}`).
 *
 * `settings.ltm.backend` picks where TEA keeps them: the local ones (`sqlite`, `duckdb`, and tea's `lmdb`, `memory`)
 * all mean tea's store (their `path` is not used: the store is where --data-dir says); the backends that need a
 * service (`hierarchical`, `firestore`, `postgres`, `turso`, `d1`, `litestream`, `blob-sqlite`…) are not in tea: the
 * loader warns, and an `ltm.*` node fails with TEA_UNSUPPORTED. Search is a scan with TEA's semantics kept simple:
 * every word of `query` must appear in the entry (its key, value and metadata as JSON, ignoring case), `score` is
 * the share of the text's words that match; `metadata_filter` keeps entries whose metadata has those values.
 */

import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { defineAction, type Action, type ActionContext } from '../types.ts'

/** The memory namespace of TEA's long-term memory in tea's store. */
const NAMESPACE = 'tea.ltm'

/** `settings.ltm.backend` values that mean a local store: tea keeps these entries in its own. */
const LOCAL_BACKENDS = ['sqlite', 'duckdb', 'lmdb', 'memory']

/** The message for a `settings.ltm.backend` tea does not provide, or undefined when tea's store serves it. */
export function ltmBackendUnsupported(backend: unknown): string | undefined {
  if (backend === undefined || (typeof backend === 'string' && LOCAL_BACKENDS.includes(backend))) return undefined
  return `'settings.ltm.backend: ${String(backend)}' is a TEA feature that tea does not provide: it needs a database service; tea keeps long-term memory in its own store (backend: sqlite, duckdb, lmdb or memory)`
}

function checkBackend(ctx: ActionContext): void {
  const message = ltmBackendUnsupported(ctx.settings.sections.ltm?.backend)
  if (message) throw new TeaError('TEA_UNSUPPORTED', message)
}

interface Entry {
  value: unknown
  metadata: Record<string, unknown> | null
}

const key = v.pipe(v.string(), v.minLength(1, 'key must not be empty'), v.description('The entry key.'))

const ltmStore = defineAction({
  name: 'ltm.store',
  description: "TEA's long-term memory: stores a value (and metadata) under a key; returns {success, stored, key, created}.",
  params: v.object({
    key,
    value: v.pipe(
      v.unknown(),
      v.check((x) => x !== undefined, 'value is required'),
      v.description('Any JSON value.'),
    ),
    metadata: v.optional(v.pipe(v.record(v.string(), v.unknown()), v.description('Fields ltm.search can filter on.'))),
  }),
  async run(p, ctx) {
    checkBackend(ctx)
    const before = await ctx.store.memoryGet(NAMESPACE, p.key)
    const entry: Entry = { value: p.value, metadata: p.metadata ?? null }
    await ctx.store.memoryPut(NAMESPACE, p.key, entry)
    return { success: true, stored: true, key: p.key, created: !before.found }
  },
})

const ltmRetrieve = defineAction({
  name: 'ltm.retrieve',
  description: "TEA's long-term memory: reads a key; returns {success, value, found, metadata} (value is `default` when absent).",
  params: v.object({
    key,
    default: v.optional(v.pipe(v.unknown(), v.description('The value when the key is absent.'))),
  }),
  async run(p, ctx) {
    checkBackend(ctx)
    const got = await ctx.store.memoryGet(NAMESPACE, p.key)
    if (!got.found) return { success: true, value: p.default ?? null, found: false, metadata: null }
    const entry = got.value as Entry
    return { success: true, value: entry.value, found: true, metadata: entry.metadata }
  },
})

const ltmDelete = defineAction({
  name: 'ltm.delete',
  description: "TEA's long-term memory: deletes a key; returns {success, deleted, key}.",
  params: v.object({ key }),
  async run(p, ctx) {
    checkBackend(ctx)
    return { success: true, deleted: await ctx.store.memoryDelete(NAMESPACE, p.key), key: p.key }
  },
})

const ltmSearch = defineAction({
  name: 'ltm.search',
  description:
    "TEA's long-term memory: entries whose text holds every word of `query` and whose metadata matches `metadata_filter`; returns {success, results: [{key, value, metadata, score}], count}.",
  params: v.object({
    query: v.optional(v.pipe(v.string(), v.description('Words that must all appear (case is ignored).'))),
    metadata_filter: v.optional(v.pipe(v.record(v.string(), v.unknown()), v.description('Metadata fields and the values they must have.'))),
    limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.description('The most results (default 10).')), 10),
  }),
  async run(p, ctx) {
    checkBackend(ctx)
    const words: string[] = (p.query ?? '').toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []
    const results: Array<{ key: string; value: unknown; metadata: Record<string, unknown> | null; score: number }> = []
    for (const k of await ctx.store.memoryList(NAMESPACE)) {
      const got = await ctx.store.memoryGet(NAMESPACE, k)
      if (!got.found) continue
      const entry = got.value as Entry
      if (p.metadata_filter && !matches(entry.metadata, p.metadata_filter)) continue
      let score = 1
      if (words.length) {
        const text = (JSON.stringify([k, entry.value, entry.metadata])
          .toLowerCase()
          .match(/[\p{L}\p{N}_]+/gu) ?? []) as string[]
        if (!words.every((w) => text.includes(w))) continue
        score = text.filter((t) => words.includes(t)).length / text.length
      }
      results.push({ key: k, value: entry.value, metadata: entry.metadata, score })
    }
    results.sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : 1))
    const kept = results.slice(0, p.limit)
    return { success: true, results: kept, count: kept.length }
  },
})

function matches(metadata: Record<string, unknown> | null, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([k, want]) => metadata !== null && JSON.stringify(metadata[k]) === JSON.stringify(want))
}

export const ltmActions: Action[] = [ltmStore, ltmRetrieve, ltmDelete, ltmSearch]
