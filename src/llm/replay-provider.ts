/**
 * Answers from a cassette, never from the network. Matching is deterministic: the entries whose key (model,
 * messages, format — see cassette.ts) equals the request's are used in file order, each once; when they are used
 * up the last one answers again (so a loop that repeats an identical prompt keeps working). No entry with the key
 * is a `CASSETTE_MISS`.
 */

import { TeaError } from '../core/errors.ts'
import { cancelled } from '../core/signals.ts'
import type { LoadedEntry } from './cassette.ts'
import { bareModel, cassetteKey, readCassette } from './cassette.ts'
import type { LlmProvider, ProviderRequest } from './types.ts'

export function createReplayProvider(path: string): LlmProvider {
  const byKey = new Map<string, LoadedEntry[]>()
  for (const loaded of readCassette(path)) {
    const list = byKey.get(loaded.key)
    if (list) list.push(loaded)
    else byKey.set(loaded.key, [loaded])
  }
  const used = new Map<string, number>()
  return {
    name: 'replay',
    async chat(request) {
      if (request.signal?.aborted) throw cancelled('LLM call cancelled')
      const key = cassetteKey(request.model, request.messages, request.format)
      const candidates = byKey.get(key)
      if (!candidates) throw miss(path, request, byKey)
      const n = used.get(key) ?? 0
      used.set(key, n + 1)
      const { entry } = candidates[Math.min(n, candidates.length - 1)]!
      if (request.onToken) {
        const tokens = entry.tokens ?? (entry.response.content === '' ? [] : [entry.response.content])
        for (const token of tokens) request.onToken(token)
      }
      return { content: entry.response.content, usage: { ...entry.response.usage } }
    },
  }
}

function miss(path: string, request: ProviderRequest, byKey: Map<string, LoadedEntry[]>): TeaError {
  const lastUser = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? ''
  const excerpt = lastUser.length > 200 ? `${lastUser.slice(0, 200)}…` : lastUser
  let sameModel = 0
  for (const list of byKey.values()) for (const l of list) if (bareModel(l.entry.request.model) === request.model) sameModel++
  return new TeaError(
    'CASSETTE_MISS',
    `no recorded exchange in ${path} matches model ${request.model} with last user message ${JSON.stringify(excerpt)}` +
      ` (the cassette has ${sameModel} exchange${sameModel === 1 ? '' : 's'} for this model${request.format === undefined ? '' : '; the format is part of the match'})`,
    {
      details: { path, model: request.model, lastUserMessage: excerpt },
      hint: `re-record it with --record ${path} against a running server, or check what changed in the prompt`,
    },
  )
}
