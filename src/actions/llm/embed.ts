import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { defineAction } from '../types.ts'

const params = v.object({
  text: v.pipe(v.union([v.string(), v.array(v.string())]), v.description('The text to embed, or a list of texts.')),
  model: v.optional(v.pipe(v.string(), v.description('An embeddings model, e.g. `ollama:nomic-embed-text`; default settings.llm.model.'))),
  provider: v.optional(v.pipe(v.string(), v.description("TEA's provider for a bare model name."))),
  base_url: v.optional(v.pipe(v.string(), v.description('Server URL; overrides OLLAMA_HOST / OPENAI_BASE_URL.'))),
  api_base: v.optional(v.pipe(v.string(), v.description("TEA's name for base_url."))),
  timeout: v.optional(v.pipe(v.number(), v.gtValue(0), v.description('Seconds allowed (default 120).'))),
  backend: v.optional(
    v.pipe(
      v.string(),
      v.description(
        "TEA's backend: `local` embeds with the GGUF model in the process (model_path, TEA_MODEL_PATH); `api` and `auto` with the model named.",
      ),
    ),
  ),
})

/** `llm.embed` (TEA's): embeddings through Ollama's `/api/embed` or an OpenAI-compatible `/v1/embeddings`. */
export const llmEmbed = defineAction({
  name: 'llm.embed',
  description: 'Embeds a text (or a list): returns {embedding, model, dimensions}, and {embeddings} for a list.',
  params,
  async run(p, ctx) {
    if (!ctx.llm.embed) throw new TeaError('LLM_BAD_MODEL', 'this model client has no embeddings')
    const list = Array.isArray(p.text) ? p.text : [p.text]
    const base = p.base_url ?? p.api_base
    const result = await ctx.llm.embed({
      input: list,
      signal: ctx.signal,
      ...(p.model !== undefined && { model: p.model }),
      ...(p.provider !== undefined && { provider: p.provider }),
      // TEA's backend: local is its llama.cpp in the process: tea's GGUF provider.
      ...(p.backend === 'local' && { provider: 'local' }),
      ...(base !== undefined && { base_url: base }),
      ...(p.timeout !== undefined && { timeout: p.timeout }),
    })
    const first = result.embeddings[0] ?? []
    return {
      embedding: first,
      model: result.model,
      dimensions: first.length,
      ...(Array.isArray(p.text) && { embeddings: result.embeddings }),
    }
  },
})
