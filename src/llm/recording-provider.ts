/**
 * Wraps a real provider and appends each successful exchange to a cassette (format in cassette.ts). Lines are
 * appended synchronously as calls finish, so a process that dies later keeps everything recorded so far. The file
 * is truncated on the first append, not before: a run that fails before its first call leaves an old cassette
 * intact. Concurrent calls are written in completion order; replay matches by content, so order only matters
 * between identical requests.
 */

import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { TeaError, errorMessage } from '../core/errors.ts'
import type { CassetteEntry, EmbedEntry } from './cassette.ts'
import { formatEmbedEntry, formatEntry } from './cassette.ts'
import type { LlmProvider } from './types.ts'

export interface CassetteWriter {
  append(entry: CassetteEntry): void
  appendEmbed(entry: EmbedEntry): void
}

export function createCassetteWriter(path: string): CassetteWriter {
  let started = false
  const write = (line: string): void => {
    try {
      if (!started) {
        mkdirSync(dirname(path), { recursive: true })
        writeFileSync(path, '')
        started = true
      }
      appendFileSync(path, line)
    } catch (e) {
      throw new TeaError('FILE_ERROR', `cannot write cassette ${path}: ${errorMessage(e)}`, { details: { path } })
    }
  }
  return {
    append: (entry) => write(formatEntry(entry)),
    appendEmbed: (entry) => write(formatEmbedEntry(entry)),
  }
}

export function recordingProvider(inner: LlmProvider, writer: CassetteWriter): LlmProvider {
  return {
    name: inner.name,
    ...(inner.embed && {
      async embed(request) {
        const embeddings = await inner.embed!(request)
        writer.appendEmbed({ model: `${inner.name}:${request.model}`, input: request.input, embeddings })
        return embeddings
      },
    }),
    async chat(request) {
      const tokens: string[] = []
      const onToken = request.onToken
      const reply = await inner.chat(
        onToken
          ? {
              ...request,
              onToken: (t) => {
                tokens.push(t)
                onToken(t)
              },
            }
          : request,
      )
      writer.append({
        request: {
          model: `${inner.name}:${request.model}`,
          messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
          ...(request.format === undefined ? {} : { format: request.format }),
          ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
          ...(request.tools?.length ? { tools: request.tools.map((t) => t.function.name) } : {}),
        },
        response: { content: reply.content, usage: reply.usage, ...(reply.toolCalls?.length ? { tool_calls: reply.toolCalls } : {}) },
        ...(onToken ? { tokens } : {}),
      })
      return reply
    },
  }
}
