/**
 * Model strings. tea's own form is `provider:model` (`ollama:qwen2.5:1.5b`, `openai:gpt-4o-mini`,
 * `replay:name`). TEA's forms are accepted too, so TEA agents run unchanged:
 * - `provider: ollama` (or `openai`) beside a bare `model: gemma3:4b`, in settings.llm or on a node;
 * - a bare name with no provider (`gpt-4o`, `gemma3:4b`), or `provider: auto`: the server is chosen from the
 *   environment — Ollama when OLLAMA_HOST or OLLAMA_API_BASE is set, an OpenAI-compatible server when
 *   OPENAI_BASE_URL or OPENAI_API_KEY is set (and no Ollama variable is), else Ollama, the local server a board
 *   runs. (TEA falls back to OpenAI's cloud; tea runs offline, so it falls back to the local server.)
 * - LiteLLM's `ollama/gemma3:4b`, `ollama_chat/…`, `openai/…`, also as `provider: litellm`.
 * - `provider: shell` + `shell_provider: <name>`: a command-line model (shell-provider.ts); `shell:<name>` in tea's form.
 * - `gguf:<path>`: a GGUF file run in the tea process (gguf/); TEA's `provider: local` says the same with the path
 *   in `model` (a `.gguf` file), TEA_MODEL_PATH or `model_path`, in TEA's order.
 * Providers that need a cloud service tea does not have (`azure`, `anthropic/…`) are LLM_BAD_MODEL, named as TEA
 * features tea does not provide.
 */

import { TeaError } from '../core/errors.ts'

export type ProviderName = 'ollama' | 'openai' | 'replay' | 'shell' | 'gguf'

export interface ModelSpec {
  provider: ProviderName
  /** The model name as the server knows it; may itself contain colons (`qwen2.5:1.5b`). */
  model: string
}

const PROVIDERS: readonly ProviderName[] = ['ollama', 'openai', 'replay', 'shell', 'gguf']

/** LiteLLM's provider prefixes that reach a server tea speaks to. */
const LITELLM: Readonly<Record<string, ProviderName>> = { ollama: 'ollama', ollama_chat: 'ollama', openai: 'openai' }

const FORMS =
  "`ollama:<name>` (e.g. ollama:qwen2.5:1.5b), `openai:<name>` (an OpenAI-compatible server), `gguf:<path>` (a GGUF file run in the process), `replay:<name>` (answers from --replay cassette), or TEA's `provider: ollama|openai|auto|local` beside a bare model name"

/** Splits tea's `provider:model` at the first colon only, because Ollama tags carry their own (`qwen2.5:1.5b`). */
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

/**
 * The server and model a call goes to, from its model string and TEA's `provider` (either may come from
 * settings.llm or the node). tea's own `provider:model` prefix is taken as written whatever `provider` says.
 */
export function resolveModel(
  model: string | undefined,
  provider: string | undefined,
  env: NodeJS.ProcessEnv,
  shellProvider?: string,
  modelPath?: string,
): ModelSpec {
  if (provider?.trim().toLowerCase() === 'local') return localModel(model, env, modelPath)
  const wantedShell = provider?.trim().toLowerCase() === 'shell'
  if (wantedShell) {
    const name = shellProvider?.trim()
    if (!name)
      throw new TeaError(
        'LLM_BAD_MODEL',
        'provider: shell needs shell_provider: <name> (a key of settings.shell_providers, or claude, gemini, codex, qwen, opencode, cursor)',
      )
    return { provider: 'shell', model: name }
  }
  const text = typeof model === 'string' ? model.trim() : ''
  if (text === '') throw badModel('the model is empty', model)
  const prefix = text.slice(0, Math.max(0, text.indexOf(':')))
  if ((PROVIDERS as readonly string[]).includes(prefix)) return parseModelSpec(text)
  const wanted = provider?.trim().toLowerCase()
  // `provider: ollama` in settings with a node's LiteLLM `ollama/phi4` means the same server. (An `openai/…` name
  // is kept: OpenAI-compatible servers such as vLLM name models that way, `openai/gpt-oss-20b`.)
  if (wanted === 'ollama') return { provider: 'ollama', model: text.replace(/^ollama(_chat)?\//, '') }
  if (wanted === 'openai') return { provider: 'openai', model: text }
  if (wanted === undefined || wanted === '' || wanted === 'auto' || wanted === 'litellm') {
    const slash = text.indexOf('/')
    const lite = slash > 0 ? text.slice(0, slash) : undefined
    if (lite !== undefined && Object.hasOwn(LITELLM, lite)) return { provider: LITELLM[lite]!, model: text.slice(slash + 1) }
    if (lite !== undefined && wanted === 'litellm') throw unavailable(`LiteLLM provider '${lite}'`, model)
    return { provider: serverFromEnv(env), model: text }
  }
  throw unavailable(`provider '${provider}'`, model)
}

/**
 * TEA's `provider: local` (llm_actions.py): the model itself when it names a `.gguf` file, else TEA_MODEL_PATH, else
 * settings.llm.model_path. (TEA then looks in its AppImage and in ~/.cache/tea/models for the models it bundles;
 * tea bundles none.)
 */
function localModel(model: string | undefined, env: NodeJS.ProcessEnv, modelPath: string | undefined): ModelSpec {
  const text = typeof model === 'string' ? model.trim() : ''
  if (text.startsWith('gguf:')) return parseModelSpec(text)
  if (/\.gguf$/i.test(text)) return { provider: 'gguf', model: text }
  const path = env.TEA_MODEL_PATH?.trim() || modelPath?.trim()
  if (path) return { provider: 'gguf', model: path }
  throw new TeaError('GGUF_NOT_FOUND', 'provider: local names no GGUF model file', {
    details: { model },
    hint: 'set settings.llm.model_path (relative to the agent file) or TEA_MODEL_PATH to a .gguf file, or write model: gguf:<path>',
  })
}

/** The server a bare model name goes to: see the module comment. */
function serverFromEnv(env: NodeJS.ProcessEnv): ProviderName {
  if (env.OLLAMA_HOST || env.OLLAMA_API_BASE) return 'ollama'
  if (env.OPENAI_BASE_URL || env.OPENAI_API_KEY) return 'openai'
  return 'ollama'
}

export function formatModelSpec(spec: ModelSpec): string {
  return `${spec.provider}:${spec.model}`
}

function badModel(what: string, spec: unknown): TeaError {
  return new TeaError('LLM_BAD_MODEL', `bad model string: ${what}; expected ${FORMS}`, {
    details: { model: spec },
  })
}

function unavailable(what: string, model: unknown, hint = 'point the agent at a local model with tea run --model ollama:<name>'): TeaError {
  return new TeaError(
    'LLM_BAD_MODEL',
    `${what} is a TEA feature that tea does not provide: tea talks to Ollama or an OpenAI-compatible server`,
    {
      details: { model },
      hint,
    },
  )
}
