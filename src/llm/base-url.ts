/**
 * Where each provider's server is. Ollama's own convention is followed for OLLAMA_HOST: it may be `host`,
 * `host:port` or a full URL, and a bare host means port 11434. An OpenAI-compatible base may be given with or
 * without the `/v1` suffix (the OpenAI SDKs expect it, llama.cpp docs omit it); both reach `<base>/v1/…`.
 */

import { TeaError } from '../core/errors.ts'

export const DEFAULT_OLLAMA_URL = 'http://127.0.0.1:11434'

export function resolveOllamaUrl(baseUrl: string | undefined, env: NodeJS.ProcessEnv): string {
  const raw = nonEmpty(baseUrl) ?? nonEmpty(env['OLLAMA_HOST'])
  if (raw === undefined) return DEFAULT_OLLAMA_URL
  let text = raw.trim()
  if (text.startsWith(':')) text = `127.0.0.1${text}`
  if (!text.includes('://')) {
    const hostPart = text.split('/')[0] ?? text
    text = `http://${/:\d+$/.test(hostPart) ? text : text.replace(hostPart, `${hostPart}:11434`)}`
  }
  return checked(stripSlash(text), baseUrl ? 'settings.llm.base_url' : 'OLLAMA_HOST', raw)
}

/** The configured OpenAI-compatible base URL, or undefined when none is configured. */
export function resolveOpenAiUrl(baseUrl: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const raw = nonEmpty(baseUrl) ?? nonEmpty(env['OPENAI_BASE_URL'])
  if (raw === undefined) return undefined
  const text = raw.trim()
  return checked(stripSlash(text.includes('://') ? text : `http://${text}`), baseUrl ? 'settings.llm.base_url' : 'OPENAI_BASE_URL', raw)
}

/** A server address that is not an http(s) URL fails here, naming where it came from, not later as "Invalid URL". */
function checked(url: string, source: string, raw: string): string {
  let parsed: URL | undefined
  try {
    parsed = new URL(url)
  } catch {
    parsed = undefined
  }
  if (!parsed || /\s/.test(url) || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new TeaError('LLM_BAD_MODEL', `${source} is not a usable server address: '${raw}'`, {
      hint: 'give host, host:port or an http(s) URL, e.g. http://127.0.0.1:11434',
      details: { source, value: raw },
    })
  }
  return url
}

export function chatCompletionsUrl(base: string): string {
  return `${base.replace(/\/v1$/, '')}/v1/chat/completions`
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v
}

function stripSlash(url: string): string {
  return url.replace(/\/+$/, '')
}

/** `<base>/v1/embeddings`, whether or not the base already ends in `/v1`. */
export function embeddingsUrl(base: string): string {
  return chatCompletionsUrl(base).replace(/\/chat\/completions$/, '/embeddings')
}
