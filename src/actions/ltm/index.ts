/**
 * TEA's long-term memory (`ltm.store`, `ltm.retrieve`, `ltm.delete`, `ltm.search`) on tea's own store: the entries
 * are documents of the collection `tea.ltm` (store/collections), so they outlast the run and the process as TEA's
 * do, and `ltm.search` ranks them by full text (BM25 over the collection's inverted index, over the key and the
 * value) as TEA's sqlite backend does with FTS5. Results have TEA's shapes (`{success, stored, key, created}`,
 * `{success, value, found, metadata}`, `{success, deleted, key}`, `{success, results: [{key, value, metadata,
 * score}], count}`); tea's scores are BM25's, higher is better (sqlite's bm25() is negated, lower is better). Without
 * a query, search lists the entries its filter keeps, newest first, with score 0, as TEA does.
 *
 * `settings.ltm.backend` picks where TEA keeps them: the local ones (`sqlite`, `duckdb`, and tea's `lmdb`, `memory`)
 * all mean tea's store (their `path` is not used: the store is where --data-dir says); the backends that need a
 * service (`hierarchical`, `firestore`, `postgres`, `turso`, `d1`, `litestream`, `blob-sqlite`…) are not in tea: the
 * loader warns, and an `ltm.*` node fails with TEA_UNSUPPORTED.
 */

import * as v from 'valibot'
import { TeaError, isTeaError } from '../../core/errors.ts'
import type { MetadataFilter } from '../../store/collections/index.ts'
import { defineAction, type Action, type ActionContext } from '../types.ts'

/** The collection of TEA's long-term memory in tea's store. */
const COLLECTION = 'tea.ltm'

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

export interface LtmEntry {
  key: string
  value: unknown
  metadata: Record<string, unknown> | null
  score: number
}

/** Stores an entry (one transaction); whether the key was new. */
export async function ltmPut(ctx: ActionContext, key: string, value: unknown, metadata: Record<string, unknown> | null): Promise<boolean> {
  const text = `${key}\n${typeof value === 'string' ? value : JSON.stringify(value)}`
  const { created } = await ctx.store.collectionPut(COLLECTION, [{ id: key, text, value: { v: value }, metadata: metadata ?? {} }])
  return created === 1
}

export async function ltmGet(ctx: ActionContext, key: string): Promise<LtmEntry | undefined> {
  const [doc] = await orNone(ctx.store.collectionGet(COLLECTION, [key]), [null])
  return doc ? entry(doc, 0) : undefined
}

export async function ltmDelete(ctx: ActionContext, keys: string[]): Promise<number> {
  return orNone(ctx.store.collectionDelete(COLLECTION, keys), 0)
}

/** Entries ranked by BM25 over `query`, or (no query) the newest, among those `filter` keeps (TEA's operators). */
export async function ltmFind(
  ctx: ActionContext,
  query: string | undefined,
  filter: MetadataFilter | undefined,
  limit: number,
): Promise<LtmEntry[]> {
  const hits = query?.trim()
    ? await orNone(ctx.store.collectionSearch(COLLECTION, query, limit, filter), [])
    : await ctx.store.collectionList(COLLECTION, limit, filter)
  return hits.map((h) => entry(h, h.score))
}

function entry(doc: { id: string; value?: unknown; metadata: Record<string, unknown> }, score: number): LtmEntry {
  const value = (doc.value as { v?: unknown } | undefined)?.v ?? null
  return { key: doc.id, value, metadata: Object.keys(doc.metadata).length ? doc.metadata : null, score }
}

/** Nothing stored yet is an empty memory, not an error. */
async function orNone<T>(p: Promise<T>, none: T): Promise<T> {
  try {
    return await p
  } catch (e) {
    if (isTeaError(e, 'COLLECTION_NOT_FOUND')) return none
    throw e
  }
}

const key = v.pipe(
  v.string(),
  v.minLength(1, 'key must not be empty'),
  v.maxLength(256, 'key must be at most 256 characters'),
  v.description('The entry key.'),
)

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
    const created = await ltmPut(ctx, p.key, p.value, p.metadata ?? null)
    return { success: true, stored: true, key: p.key, created }
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
    const got = await ltmGet(ctx, p.key)
    if (!got) return { success: true, value: p.default ?? null, found: false, metadata: null }
    return { success: true, value: got.value, found: true, metadata: got.metadata }
  },
})

const ltmDeleteAction = defineAction({
  name: 'ltm.delete',
  description: "TEA's long-term memory: deletes a key; returns {success, deleted, key}.",
  params: v.object({ key }),
  async run(p, ctx) {
    checkBackend(ctx)
    return { success: true, deleted: (await ltmDelete(ctx, [p.key])) === 1, key: p.key }
  },
})

const ltmSearch = defineAction({
  name: 'ltm.search',
  description:
    "TEA's long-term memory: entries ranked by full text (BM25) over `query`, among those whose metadata passes `metadata_filter`; returns {success, results: [{key, value, metadata, score}], count}.",
  params: v.object({
    query: v.optional(v.pipe(v.string(), v.maxLength(4096), v.description('Words to rank by (any of them; case is ignored).'))),
    metadata_filter: v.optional(
      v.pipe(
        v.record(v.string(), v.unknown()),
        v.description('Metadata fields and the values they must have (and field_gte, _lte, _gt, _lt, _ne, _in).'),
      ),
    ),
    limit: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000), v.description('The most results (default 10).')),
      10,
    ),
  }),
  async run(p, ctx) {
    checkBackend(ctx)
    const results = await ltmFind(ctx, p.query, p.metadata_filter, p.limit)
    return { success: true, results, count: results.length }
  },
})

export const ltmActions: Action[] = [ltmStore, ltmRetrieve, ltmDeleteAction, ltmSearch]
