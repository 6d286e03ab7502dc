import { TeaError } from '../core/errors.ts'

export type ProviderName = 'ollama' | 'openai' | 'replay'

export interface ModelSpec {
  provider: ProviderName
  /** The model name as the server knows it; may itself contain colons (`qwen2.5:1.5b`). */
  model: string
}

const PROVIDERS: readonly ProviderName[] = ['ollama', 'openai', 'replay']

const FORMS = '`ollama:<name>` (e.g. ollama:qwen2.5:1.5b), `openai:<name>` (an OpenAI-compatible server) or `replay:<name>` (answers from --replay cassette)'

/** Splits `provider:model` at the first colon only, because Ollama tags carry their own (`qwen2.5:1.5b`). */
export function parseModelSpec(spec: string): ModelSpec {
  const text = typeof spec === 'string' ? spec.trim() : ''
  const colon = text.indexOf(':')
  const provider = colon === -1 ? '' : text.slice(0, colon)
  const model = colon === -1 ? '' : text.slice(colon + 1).trim()
  if (text === '') throw badModel('the model is empty', spec)
  if (colon === -1) throw badModel(`'${text}' has no provider prefix`, spec)
  if (!(PROVIDERS as readonly string[]).includes(provider)) throw badModel(`unknown provider '${provider}' in '${text}'`, spec)
  if (model === '') throw badModel(`'${text}' names no model after the provider`, spec)
  return { provider: provider as ProviderName, model }
}

export function formatModelSpec(spec: ModelSpec): string {
  return `${spec.provider}:${spec.model}`
}

function badModel(what: string, spec: unknown): TeaError {
  return new TeaError('LLM_BAD_MODEL', `bad model string: ${what}; expected ${FORMS}`, {
    details: { model: spec },
  })
}
