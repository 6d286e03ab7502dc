import type { LlmSettings } from './types.ts'

export const LLM_SETTING_KEYS = [
  'model',
  'provider',
  'shell_provider',
  'shell_providers',
  'temperature',
  'timeout',
  'max_retries',
  'max_reply_bytes',
  'base_url',
  'format',
  'keep_alive',
  'max_tokens',
  'stop',
  'options',
  'api_key',
  'seed',
  'model_path',
  'n_ctx',
  'threads',
  'n_gpu_layers',
  'chat_format',
  'model_dir',
] as const

export const DEFAULT_TIMEOUT_S = 120
export const DEFAULT_MAX_RETRIES = 2
/**
 * 4 MiB of text: far more than a small model writes in one reply (about a million tokens), and little next to
 * the 0.5–8 GB a board shares between tea and the model.
 */
export const DEFAULT_MAX_REPLY_BYTES = 4 * 1024 * 1024

/**
 * `settings.llm` under per-call values, key by key. A per-call key that is present but `undefined` does not
 * erase the default (a plain spread would), because action params arrive with every optional key spelled out.
 */
export function mergeLlmSettings(defaults: LlmSettings | undefined, call: LlmSettings): LlmSettings {
  const merged: Record<string, unknown> = {}
  for (const key of LLM_SETTING_KEYS) {
    const value = call[key] !== undefined ? call[key] : defaults?.[key]
    if (value !== undefined) merged[key] = value
  }
  return merged as LlmSettings
}
