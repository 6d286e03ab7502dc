/**
 * The two requests the call scheduler makes to an Ollama server besides chat: which models are loaded (`/api/ps`),
 * and setting a model's `keep_alive` once a run is over (a chat with no messages, which Ollama answers without
 * generating; `keep_alive: 0` unloads the model). Both are advice: a server that does not answer them (an older
 * Ollama, a proxy) changes nothing, so their failures are ignored.
 */

import { httpFetch } from '../core/http.ts'

const ADVICE_TIMEOUT_MS = 2000

/** The names of the models the server has loaded, or [] when it does not say. */
export async function loadedModels(url: string): Promise<string[]> {
  try {
    const res = await httpFetch(`${url}/api/ps`, { signal: AbortSignal.timeout(ADVICE_TIMEOUT_MS) })
    if (!res.ok) return []
    const body = (await res.json()) as { models?: Array<{ name?: unknown; model?: unknown }> }
    return (body.models ?? []).map((m) => m.model ?? m.name).filter((m): m is string => typeof m === 'string')
  } catch {
    return []
  }
}

/** Sets how long `model` stays loaded from now (`0`: unload it). */
export async function setKeepAlive(url: string, model: string, keepAlive: string | number): Promise<void> {
  try {
    const res = await httpFetch(`${url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [], keep_alive: keepAlive }),
      signal: AbortSignal.timeout(ADVICE_TIMEOUT_MS),
    })
    await res.body?.cancel()
  } catch {
    // advice only: the server unloads the model after its own keep_alive anyway
  }
}
