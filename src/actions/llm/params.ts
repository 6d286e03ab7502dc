/**
 * The parameters `llm.call` and `llm.stream` share, and how they become an `LlmRequest`. Every LLM setting is
 * optional here: what a node leaves out comes from `settings.llm`.
 */

import * as v from 'valibot'
import type { ChatMessage, LlmRequest } from '../../llm/types.ts'

const message = v.object({
  role: v.picklist(['system', 'user', 'assistant', 'tool']),
  content: v.string(),
})

/** Every field of `llm.call`'s parameters (other actions that call a model pick the ones they take). */
export const llmFields = v.object({
  model: v.optional(
    v.pipe(
      v.string(),
      v.description('`provider:model`, e.g. `ollama:qwen2.5:1.5b`, or a bare name beside `provider`; default settings.llm.model.'),
    ),
  ),
  provider: v.optional(
    v.pipe(
      v.string(),
      v.description("TEA's provider for a bare model name: `ollama`, `openai`, `auto` (from the environment) or `litellm`."),
    ),
  ),
  prompt: v.optional(
    v.pipe(v.string(), v.description('The user message. Give this or `messages` (with both, `messages` wins, as in TEA).')),
  ),
  messages: v.optional(v.pipe(v.array(message), v.description('The whole conversation, as {role, content} objects.'))),
  system: v.optional(v.pipe(v.string(), v.description('A system message put before the prompt or messages.'))),
  temperature: v.optional(v.pipe(v.number(), v.minValue(0), v.description('Sampling temperature.'))),
  format: v.optional(
    v.pipe(
      v.union([v.literal('json'), v.record(v.string(), v.unknown())]),
      v.description('`json`, or a JSON Schema the reply must follow; the parsed reply is returned as `parsed`.'),
    ),
  ),
  timeout: v.optional(v.pipe(v.number(), v.gtValue(0), v.description('Seconds allowed for one attempt (default 120).'))),
  max_retries: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.description('Retries of transient failures (default 2).'))),
  max_reply_bytes: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.description('The largest reply accepted, in bytes of text (default 4194304, 4 MiB).')),
  ),
  base_url: v.optional(v.pipe(v.string(), v.description('Server URL; overrides OLLAMA_HOST / OPENAI_BASE_URL.'))),
  api_base: v.optional(v.pipe(v.string(), v.description("TEA's name for base_url."))),
  shell_provider: v.optional(
    v.pipe(v.string(), v.description('With `provider: shell`: the command-line model to run (settings.shell_providers).')),
  ),
  max_tokens: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.description('The most tokens the reply may have.'))),
  stop: v.optional(v.pipe(v.union([v.string(), v.array(v.string())]), v.description('A sequence (or a list) that ends the reply.'))),
  options: v.optional(
    v.pipe(v.record(v.string(), v.unknown()), v.description("Model options passed on as they are (Ollama's `num_ctx`, `top_k`, …).")),
  ),
  response_format: v.optional(
    v.pipe(
      v.union([
        v.object({
          type: v.picklist(['text', 'json_object', 'json_schema']),
          json_schema: v.optional(v.object({ schema: v.optional(v.record(v.string(), v.unknown())) })),
        }),
        // The type alone (`response_format: json_object`), as some TEA files write it.
        v.pipe(
          v.picklist(['text', 'json_object']),
          v.transform((type) => ({ type, json_schema: undefined })),
        ),
      ]),
      v.description(
        "OpenAI's spelling of `format`: `{type: json_object}` (or `json_object` alone) is `format: json`, `{type: json_schema, json_schema: {schema}}` a schema.",
      ),
    ),
  ),
  keep_alive: v.optional(
    v.pipe(
      v.union([v.string(), v.number()]),
      v.description('How long the model stays loaded after the call (e.g. `5m`): Ollama, a GGUF model.'),
    ),
  ),
  seed: v.optional(
    v.pipe(v.number(), v.integer(), v.description('A fixed sampling seed: the same reply every run (with the same temperature).')),
  ),
  model_path: v.optional(
    v.pipe(v.string(), v.description("TEA's GGUF file for `provider: local`, relative to the agent file (as `model: gguf:<path>`).")),
  ),
  extra_body: v.optional(
    v.pipe(
      v.record(v.string(), v.unknown()),
      v.description("TEA's (OpenAI's) extra request fields: sent in the body to an OpenAI-compatible server; to Ollama, as options."),
    ),
  ),
})

/** With both `prompt` and `messages`, `messages` is the conversation and `prompt` is not sent, as in TEA's llm.call. */
export const llmParams = v.pipe(
  llmFields,
  v.check((p) => p.prompt !== undefined || p.messages !== undefined, 'give `prompt` or `messages`'),
)

export type LlmParams = v.InferOutput<typeof llmParams>

export function toLlmRequest(params: LlmParams): LlmRequest {
  const messages: ChatMessage[] = []
  if (params.system !== undefined) messages.push({ role: 'system', content: params.system })
  if (params.messages) messages.push(...params.messages)
  else if (params.prompt !== undefined) messages.push({ role: 'user', content: params.prompt })
  const { prompt: _p, messages: _m, system: _s, api_base, response_format, stop, extra_body, ...settings } = params
  const request: LlmRequest = { ...settings, messages }
  if (extra_body !== undefined) request.options = { ...extra_body, ...settings.options }
  if (api_base !== undefined && settings.base_url === undefined) request.base_url = api_base
  if (stop !== undefined) request.stop = typeof stop === 'string' ? [stop] : stop
  if (response_format !== undefined && settings.format === undefined) {
    if (response_format.type === 'json_object') request.format = 'json'
    else if (response_format.type === 'json_schema') request.format = response_format.json_schema?.schema ?? 'json'
  }
  return request
}
