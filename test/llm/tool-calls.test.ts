/**
 * Native tool calling through the real clients against the fake model server, for Ollama's API and OpenAI's:
 * the tools go out in each API's shape, tool calls come back as `tool_calls`, bad arguments are a clear
 * LLM_BAD_RESPONSE, and a cassette records and replays a tool call.
 */

import { readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createLlmClient } from '../../src/llm/client.ts'
import type { ToolDefinition } from '../../src/llm/types.ts'
import { rejects } from '../support/expect.ts'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { tempDir } from '../support/temp-dir.ts'

const TOOLS: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'calc__add',
      description: 'Adds two numbers',
      parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    },
  },
]
const messages = [{ role: 'user' as const, content: 'What is 2 + 3?' }]

for (const api of ['ollama', 'openai'] as const) {
  const env = (url: string) => (api === 'ollama' ? { OLLAMA_HOST: url } : { OPENAI_BASE_URL: url })

  test(`${api}: tools go out in the request, tool calls come back parsed`, async () => {
    const server = await startFakeModelServer()
    try {
      server.script({ content: '', toolCalls: [{ name: 'calc__add', arguments: { a: 2, b: 3 } }] })
      const llm = createLlmClient({ env: env(server.url) })
      const r = await llm.call({ model: `${api}:tiny`, messages, tools: TOOLS })
      assert.equal(r.tool_calls, [{ name: 'calc__add', arguments: { a: 2, b: 3 } }])
      assert.is(r.content, '')
      assert.equal(server.chatRequests()[0]!.body.tools, TOOLS)
      assert.is(server.chatRequests()[0]!.body.stream, false)
    } finally {
      await server.close()
    }
  })

  test(`${api}: without tools nothing changes, and a reply without tool calls has no tool_calls`, async () => {
    const server = await startFakeModelServer()
    try {
      server.script({ content: 'five' }, { content: 'six' })
      const llm = createLlmClient({ env: env(server.url) })
      const r = await llm.call({ model: `${api}:tiny`, messages })
      assert.is(r.tool_calls, undefined)
      assert.is(server.chatRequests()[0]!.body.tools, undefined)
      // Tools offered, not used: the text is the reply. A token sink is not used with tools (not streamed).
      const tokens: string[] = []
      const s = await llm.call({ model: `${api}:tiny`, messages, tools: TOOLS, onToken: (t) => tokens.push(t) })
      assert.is(s.content, 'six')
      assert.is(s.tool_calls, undefined)
      assert.equal(tokens, [])
    } finally {
      await server.close()
    }
  })
}

test('openai: tool call arguments that are not a JSON object are LLM_BAD_RESPONSE carrying them', async () => {
  const server = await startFakeModelServer()
  try {
    const body = {
      choices: [
        { message: { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'x', arguments: '{oops' } }] } },
      ],
    }
    server.script({ garbage: JSON.stringify(body) })
    const llm = createLlmClient({ env: { OPENAI_BASE_URL: server.url }, backoffBaseMs: 1 })
    await rejects(() => llm.call({ model: 'openai:tiny', messages, tools: TOOLS, max_retries: 0 }), 'LLM_BAD_RESPONSE', '{oops')
  } finally {
    await server.close()
  }
})

test('a cassette records a tool call with the tools offered, and replays it only for a call offering them', async () => {
  const dir = tempDir('tea-tools-cassette-')
  const cassette = path.join(dir, 'c.jsonl')
  const server = await startFakeModelServer()
  try {
    server.script({ content: '', toolCalls: [{ name: 'calc__add', arguments: { a: 2, b: 3 } }] })
    await createLlmClient({ env: { OLLAMA_HOST: server.url }, record: cassette }).call({ model: 'ollama:tiny', messages, tools: TOOLS })
    const line = JSON.parse(readFileSync(cassette, 'utf8'))
    assert.equal(line.request.tools, ['calc__add'])
    assert.equal(line.response.tool_calls, [{ name: 'calc__add', arguments: { a: 2, b: 3 } }])
    const replay = createLlmClient({ env: {}, replay: cassette })
    const r = await replay.call({ model: 'ollama:tiny', messages, tools: TOOLS })
    assert.equal(r.tool_calls, [{ name: 'calc__add', arguments: { a: 2, b: 3 } }])
    await rejects(() => replay.call({ model: 'ollama:tiny', messages }), 'CASSETTE_MISS')
  } finally {
    await server.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
