/**
 * Embeddings for the vector actions: through tea's model client (`llm.embed`'s path: Ollama's `/api/embed` or an
 * OpenAI-compatible `/v1/embeddings`), in batches, and cached in the store by model and text, so a re-run of an
 * indexing agent asks the model only for texts it has not seen. The model a collection records is the one named
 * here (`with.model`, else `settings.llm.model`), as written: `ollama:nomic-embed-text` and `nomic-embed-text` are
 * two names.
 */

import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import type { ActionContext } from '../types.ts'

/** Texts a request carries: Ollama and OpenAI servers take lists, and a board's server is slow on long ones. */
const BATCH = 64

export const embedParams = {
  model: v.optional(v.pipe(v.string(), v.description('An embeddings model, e.g. `ollama:nomic-embed-text`; default settings.llm.model.'))),
  provider: v.optional(v.pipe(v.string(), v.description("TEA's provider for a bare model name."))),
  base_url: v.optional(v.pipe(v.string(), v.description('Server URL; overrides OLLAMA_HOST / OPENAI_BASE_URL.'))),
  timeout: v.optional(v.pipe(v.number(), v.gtValue(0), v.description('Seconds allowed for each request (default 120).'))),
}

export interface EmbedOptions {
  model?: string | undefined
  provider?: string | undefined
  base_url?: string | undefined
  timeout?: number | undefined
}

export interface Embedded {
  vectors: number[][]
  /** The model's name as the collection records it. */
  model: string
  /** How many came from the cache. */
  cached: number
}

export async function embedTexts(ctx: ActionContext, texts: string[], o: EmbedOptions): Promise<Embedded> {
  const model = o.model ?? ctx.settings.llm.model
  if (!ctx.llm.embed) throw new TeaError('LLM_BAD_MODEL', 'this model client has no embeddings')
  if (model === undefined || model === '') {
    throw new TeaError('LLM_BAD_MODEL', 'no embeddings model given', {
      hint: 'set with.model on the node (e.g. ollama:nomic-embed-text) or settings.llm.model',
    })
  }
  const key = o.provider && !model.includes(':') ? `${o.provider}:${model}` : model
  const vectors: Array<number[] | null> = await ctx.store.embeddingCacheGet(key, texts)
  const missing = [...new Set(texts.filter((_, i) => vectors[i] === null))]
  const cached = texts.length - vectors.filter((x) => x === null).length
  const made = new Map<string, number[]>()
  for (let i = 0; i < missing.length; i += BATCH) {
    const batch = missing.slice(i, i + BATCH)
    const result = await ctx.llm.embed({
      input: batch,
      model,
      ...(ctx.signal && { signal: ctx.signal }),
      ...(o.provider !== undefined && { provider: o.provider }),
      ...(o.base_url !== undefined && { base_url: o.base_url }),
      ...(o.timeout !== undefined && { timeout: o.timeout }),
    })
    if (result.embeddings.length !== batch.length) {
      throw new TeaError('LLM_BAD_RESPONSE', `the embeddings server returned ${result.embeddings.length} vectors for ${batch.length} texts`)
    }
    await ctx.store.embeddingCachePut(key, batch, result.embeddings)
    batch.forEach((t, j) => made.set(t, result.embeddings[j]!))
  }
  return { vectors: texts.map((t, i) => vectors[i] ?? made.get(t)!), model: key, cached }
}
