/**
 * Answers from a cassette, never from the network. Matching is deterministic: the entries whose key (model,
 * messages, format — see cassette.ts) equals the request's are used in file order, each once; when they are used
 * up the last one answers again (so a loop that repeats an identical prompt keeps working). No entry with the key
 * is a `CASSETTE_MISS`. `max_reply_bytes` holds here as it does against a server: a streamed reply's tokens are
 * passed on until the one that would pass the cap, and a recorded reply over it fails with LLM_REPLY_TOO_LARGE.
 * Embeddings are answered text by text from the cassette's embed lines; a text it lacks is a CASSETTE_MISS.
 */

import { TeaError } from '../core/errors.ts'
import { cancelled } from '../core/signals.ts'
import type { LoadedEntry } from './cassette.ts'
import { bareModel, cassetteKey, embedKey, readCassette, readCassetteEmbeddings } from './cassette.ts'
import { REPLY_CAP_HINT, formatBytes } from './failure.ts'
import type { LlmProvider, ProviderReply, ProviderRequest } from './types.ts'

export function createReplayProvider(path: string): LlmProvider {
  const byKey = new Map<string, LoadedEntry[]>()
  for (const loaded of readCassette(path)) {
    const list = byKey.get(loaded.key)
    if (list) list.push(loaded)
    else byKey.set(loaded.key, [loaded])
  }
  const used = new Map<string, number>()
  const vectors = readCassetteEmbeddings(path)
  return {
    name: 'replay',
    async embed(request) {
      if (request.signal?.aborted) throw cancelled('embeddings call cancelled')
      return request.input.map((text) => {
        const vector = vectors.get(embedKey(request.model, text))
        if (vector) return [...vector]
        const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text
        throw new TeaError(
          'CASSETTE_MISS',
          `no recorded embedding in ${path} for model ${request.model} and text ${JSON.stringify(excerpt)}`,
          {
            details: { path, model: request.model, text: excerpt },
            hint: `re-record it with --record ${path} against a running server, or check what changed in the texts`,
          },
        )
      })
    },
    async chat(request) {
      if (request.signal?.aborted) throw cancelled('LLM call cancelled')
      const key = cassetteKey(
        request.model,
        request.messages,
        request.format,
        request.tools?.map((t) => t.function.name),
      )
      const candidates = byKey.get(key)
      if (!candidates) throw miss(path, request, byKey)
      const n = used.get(key) ?? 0
      used.set(key, n + 1)
      const { entry, line } = candidates[Math.min(n, candidates.length - 1)]!
      const tooLarge = (size: number): TeaError => recordedTooLarge(path, line, request.maxReplyBytes, size)
      if (request.onToken) {
        const tokens = entry.tokens ?? (entry.response.content === '' ? [] : [entry.response.content])
        let size = 0
        for (const token of tokens) {
          size += Buffer.byteLength(token)
          if (size > request.maxReplyBytes) throw tooLarge(Buffer.byteLength(tokens.join('')))
          request.onToken(token)
        }
      }
      const size = Buffer.byteLength(entry.response.content)
      if (size > request.maxReplyBytes) throw tooLarge(size)
      const reply: ProviderReply = { content: entry.response.content, usage: { ...entry.response.usage } }
      if (entry.response.tool_calls) reply.toolCalls = entry.response.tool_calls.map((c) => ({ ...c }))
      return reply
    },
  }
}

function recordedTooLarge(path: string, line: number, cap: number, size: number): TeaError {
  return new TeaError(
    'LLM_REPLY_TOO_LARGE',
    `the recorded reply at ${path}:${line} is larger than max_reply_bytes (${formatBytes(cap)}): it holds ${size} bytes of text`,
    {
      details: { path, line, max_reply_bytes: cap, bytes: size },
      hint: REPLY_CAP_HINT,
    },
  )
}

function miss(path: string, request: ProviderRequest, byKey: Map<string, LoadedEntry[]>): TeaError {
  const lastUser = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? ''
  const excerpt = lastUser.length > 200 ? `${lastUser.slice(0, 200)}…` : lastUser
  let sameModel = 0
  for (const list of byKey.values()) for (const l of list) if (bareModel(l.entry.request.model) === bareModel(request.model)) sameModel++
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
