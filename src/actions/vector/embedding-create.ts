import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { defineAction } from '../types.ts'
import { embedParams, embedTexts } from './embed.ts'

const MAX_TEXTS = 10_000

/**
 * TEA's `embedding.create`: one text → {embedding, model, dimensions}; a list (or `batch: true`) → {embeddings,
 * model, count, dimensions}. Embeddings are cached in the store by model and text (embed.ts).
 */
export const embeddingCreate = defineAction({
  name: 'embedding.create',
  description:
    "TEA's embedding.create: a text → {embedding, model, dimensions}; a list (or batch: true) → {embeddings, model, count, dimensions}. Cached by model and text.",
  params: v.object({
    text: v.pipe(v.union([v.string(), v.array(v.string())]), v.description('The text to embed, or a list of texts.')),
    batch: v.optional(v.pipe(v.boolean(), v.description('Return the list form even for one text.')), false),
    ...embedParams,
  }),
  async run(p, ctx) {
    const texts = Array.isArray(p.text) ? p.text : [p.text]
    if (texts.length > MAX_TEXTS) throw new TeaError('DOCUMENT_INVALID', `${texts.length} texts to embed; at most ${MAX_TEXTS}`)
    const { vectors, model } = await embedTexts(ctx, texts, p)
    const dimensions = vectors[0]?.length ?? 0
    if (Array.isArray(p.text) || p.batch) return { embeddings: vectors, model, count: vectors.length, dimensions }
    return { embedding: vectors[0], model, dimensions }
  },
})
