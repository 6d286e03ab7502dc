/**
 * One way per provider to arrange "the next call with these messages gets this reply" and build a client that
 * reaches it: ollama and openai through the fake model server and the real clients, replay through a cassette
 * file in a temp dir. The contract suite runs the same cases against each.
 */

import { appendFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { createLlmClient } from '../../src/llm/client.ts'
import type { LlmClientOptions } from '../../src/llm/client.ts'
import type { ChatMessage, JsonSchema, LlmClient, LlmUsage } from '../../src/llm/types.ts'
import type { FakeModelServer } from '../support/fake-model-server.ts'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { tempDir } from '../support/temp-dir.ts'

export interface Arranged {
  content: string
  tokens?: string[]
  usage: LlmUsage
}

export interface Harness {
  name: string
  model: string
  arrange(call: { messages: ChatMessage[]; format?: 'json' | JsonSchema }, reply: Arranged): void
  client(extra?: Partial<LlmClientOptions>): LlmClient
  /** How many chat requests reached a server (undefined for replay, which has none). */
  sent(): number | undefined
  close(): Promise<void>
}

export type HarnessFactory = () => Promise<Harness>

export const TEST_BACKOFF_MS = 5

function networkHarness(name: 'ollama' | 'openai'): HarnessFactory {
  return async () => {
    const server: FakeModelServer = await startFakeModelServer()
    const env = name === 'ollama' ? { OLLAMA_HOST: server.url } : { OPENAI_BASE_URL: server.url }
    return {
      name,
      model: `${name}:tiny`,
      arrange: (_call, reply) =>
        server.script({ content: reply.content, ...(reply.tokens ? { tokens: reply.tokens } : {}), usage: reply.usage }),
      client: (extra) => createLlmClient({ env, backoffBaseMs: TEST_BACKOFF_MS, ...extra }),
      sent: () => server.chatRequests().length,
      close: () => server.close(),
    }
  }
}

export const ollamaHarness = networkHarness('ollama')
export const openAiHarness = networkHarness('openai')

export const replayHarness: HarnessFactory = async () => {
  const dir = tempDir('tea-llm-replay-')
  const path = join(dir, 'contract.cassette.jsonl')
  appendFileSync(path, '')
  return {
    name: 'replay',
    model: 'replay:tiny',
    arrange(call, reply) {
      const entry = {
        request: { model: 'ollama:tiny', messages: call.messages, ...(call.format === undefined ? {} : { format: call.format }) },
        response: { content: reply.content, usage: reply.usage },
        ...(reply.tokens ? { tokens: reply.tokens } : {}),
      }
      appendFileSync(path, `${JSON.stringify(entry)}\n`)
    },
    client: (extra) => createLlmClient({ env: {}, replay: path, ...extra }),
    sent: () => undefined,
    close: async () => rmSync(dir, { recursive: true, force: true }),
  }
}
