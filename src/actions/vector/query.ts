import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { defineAction } from '../types.ts'
import { embedParams, embedTexts } from './embed.ts'
import { collectionParam } from './store.ts'

/**
 * TEA's `vector.query`: the k documents of a collection most similar to `query` (cosine, exact: every stored vector
 * is compared), among those whose metadata passes `filter` (TEA's operators: `field`, `field_gte`, `_lte`, `_gt`,
 * `_lt`, `_ne`, `_in`), applied before scoring. Returns {results: [{id, text, score, metadata}], query, collection, k}.
 */
export const vectorQuery = defineAction({
  name: 'vector.query',
  description:
    "TEA's vector.query: the k nearest documents of a collection (exact cosine similarity), filtered by metadata first; returns {results: [{id, text, score, metadata}], query, collection, k}.",
  params: v.object({
    query: v.optional(v.pipe(v.string(), v.description('The text to look for (embedded with the collection model).'))),
    embedding: v.optional(v.pipe(v.array(v.number()), v.description('A query vector made already, instead of query.'))),
    k: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000), v.description('How many results (default 5).')), 5),
    collection: collectionParam,
    filter: v.optional(
      v.pipe(
        v.record(v.string(), v.unknown()),
        v.description('Metadata conditions: field, field_gte, field_lte, field_gt, field_lt, field_ne, field_in.'),
      ),
    ),
    include_embeddings: v.optional(v.pipe(v.boolean(), v.description("TEA's flag; tea's results leave the vectors out."))),
    ...embedParams,
  }),
  async run(p, ctx) {
    if (p.include_embeddings) {
      throw new TeaError('TEA_UNSUPPORTED', 'vector.query include_embeddings: tea keeps vectors normalised and does not return them', {
        hint: 'embed the texts of the results with embedding.create when you need their vectors',
      })
    }
    let vector: number[]
    let model: string | undefined
    if (p.embedding) vector = p.embedding
    else if (p.query !== undefined) {
      if (p.query.trim() === '') throw new TeaError('DOCUMENT_INVALID', 'vector.query: query is empty')
      const info = await ctx.store.collectionInfo(p.collection)
      if (!info) {
        throw new TeaError('COLLECTION_NOT_FOUND', `no collection named ${JSON.stringify(p.collection)}: nothing was stored in it`, {
          details: { collection: p.collection },
          hint: 'store documents first (vector.store), or check the collection name',
        })
      }
      // The collection's own model embeds the query unless the node names one (then a different one is refused).
      const embedded = await embedTexts(ctx, [p.query], { ...p, model: p.model ?? info.model })
      vector = embedded.vectors[0]!
      model = embedded.model
    } else throw new TeaError('DOCUMENT_INVALID', 'vector.query needs query (a text) or embedding (a vector)')
    const hits = await ctx.store.collectionQuery(p.collection, vector, p.k, p.filter, model)
    return {
      results: hits.map((h) => ({ id: h.id, text: h.text, score: h.score, metadata: h.metadata })),
      query: p.query ?? null,
      collection: p.collection,
      k: p.k,
    }
  },
})

/** `vector.delete` (tea's): removes documents by id, with their vectors and index entries, in one transaction. */
export const vectorDelete = defineAction({
  name: 'vector.delete',
  description: 'Deletes documents of a collection by id (one transaction); returns {deleted, collection}.',
  params: v.object({
    ids: v.pipe(v.union([v.string(), v.array(v.string())]), v.description('An id or a list of ids.')),
    collection: collectionParam,
  }),
  async run(p, ctx) {
    const ids = Array.isArray(p.ids) ? p.ids : [p.ids]
    if (ids.length > 10_000) throw new TeaError('DOCUMENT_INVALID', `${ids.length} ids in one delete; at most 10000`)
    return { deleted: await ctx.store.collectionDelete(p.collection, ids), collection: p.collection }
  },
})
