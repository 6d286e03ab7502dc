import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { defineAction } from '../types.ts'
import { embedParams, embedTexts } from './embed.ts'

export const collectionParam = v.optional(v.pipe(v.string(), v.description('The collection (default `default`).')), 'default')

/**
 * TEA's `vector.store`: texts (embedded here unless `embeddings` are given), ids (new UUIDs by default; an id that
 * exists is replaced) and metadata (one mapping for all, or one per text), written in one transaction. Returns
 * {stored, collection, ids}.
 */
export const vectorStore = defineAction({
  name: 'vector.store',
  description:
    "TEA's vector.store: embeds texts and stores them with ids and metadata in a collection of tea's store (one transaction); an existing id is replaced. Returns {stored, collection, ids}.",
  params: v.object({
    texts: v.pipe(v.union([v.string(), v.array(v.string())]), v.description('A text or a list of texts.')),
    embeddings: v.optional(v.pipe(v.array(v.array(v.number())), v.description('Vectors made already, one per text (needs model).'))),
    ids: v.optional(v.pipe(v.array(v.string()), v.description('One id per text; default new UUIDs.'))),
    metadata: v.optional(
      v.pipe(
        v.union([v.array(v.record(v.string(), v.unknown())), v.record(v.string(), v.unknown())]),
        v.description('One mapping for every text, or one per text.'),
      ),
    ),
    collection: collectionParam,
    ...embedParams,
  }),
  async run(p, ctx) {
    const texts = Array.isArray(p.texts) ? p.texts : [p.texts]
    const count = (what: string, n: number) => {
      if (n !== texts.length)
        throw new TeaError('DOCUMENT_INVALID', `${n} ${what} for ${texts.length} texts`, { hint: `give one of ${what} per text` })
    }
    if (p.ids) count('ids', p.ids.length)
    if (Array.isArray(p.metadata)) count('metadata mappings', p.metadata.length)
    // Empty texts are refused before anything is embedded (the store refuses them too, after).
    const empty = texts.findIndex((t) => t.trim() === '')
    if (empty >= 0) throw new TeaError('DOCUMENT_INVALID', `text ${empty} is empty`, { hint: 'leave empty texts out' })
    let vectors: number[][]
    let model: string
    if (p.embeddings) {
      count('embeddings', p.embeddings.length)
      model = p.model ?? ctx.settings.llm.model ?? ''
      if (!model) throw new TeaError('DOCUMENT_INVALID', 'embeddings given without the model that made them', { hint: 'set with.model' })
      vectors = p.embeddings
    } else {
      ;({ vectors, model } = await embedTexts(ctx, texts, p))
    }
    const docs = texts.map((text, i) => ({
      text,
      vector: vectors[i]!,
      ...(p.ids && { id: p.ids[i]! }),
      ...(p.metadata && { metadata: Array.isArray(p.metadata) ? p.metadata[i]! : p.metadata }),
    }))
    const { ids } = await ctx.store.collectionPut(p.collection, docs, model)
    return { stored: ids.length, collection: p.collection, ids }
  },
})
