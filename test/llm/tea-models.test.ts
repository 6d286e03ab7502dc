/**
 * Issue 10 item 1 end to end: TEA's model naming in a real agent file, through the loader, the engine and the real
 * client against the fake model server; and `--model` (RunServices.model) pointing every node at one local model.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { startRun } from '../../src/engine/lifecycle.ts'
import { buildRegistry } from '../../src/features.ts'
import { createLlmClient } from '../../src/llm/client.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import { fakeEmbedding, type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.ts'

const t = suite<{ server: FakeModelServer }>('TEA model naming')
t.before.each(async (ctx) => {
  ctx.server = await startFakeModelServer()
  ctx.server.fallback({ content: 'ok' })
})
t.after.each(async (ctx) => {
  await ctx.server.close()
})

const TEA_AGENT = `name: tea-style
settings:
  llm:
    provider: ollama
    model: gemma3:4b
    api_base: BASE
nodes:
  - name: default_model
    uses: llm.call
    with: { prompt: "one" }
    output: { one: "{{ result.content }}" }
  - name: own_model
    uses: llm.call
    with: { model: "ollama/phi4:mini", prompt: "two" }
    output: { two: "{{ result.content }}" }
  - name: cloud_model
    uses: llm.call
    with: { provider: openai, model: gpt-4o, prompt: "three" }
    output: { three: "{{ result.content }}" }
`

async function runAgent(server: FakeModelServer, yaml: string, model?: string) {
  const registry = buildRegistry()
  const { spec, problems } = loadAgentText(yaml.replace('BASE', server.url), '/tmp/tea-style.yaml', registry)
  assert.ok(spec, JSON.stringify(problems))
  // No OLLAMA_HOST: the agent's api_base is what reaches the server.
  const llm = (s: typeof spec) =>
    createLlmClient({ env: { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'k' }, defaults: s.settings.llm })
  return startRun(spec, { store: createMemoryStore(), registry, llm, ...(model && { model }) }, { runId: 'r' })
}

t(
  '10-1 provider: ollama + bare model, LiteLLM ollama/…, api_base: each call reaches the server with the model as TEA wrote it',
  async ({ server }) => {
    const r = await runAgent(server, TEA_AGENT.replace(/  - name: cloud_model[\s\S]*$/, ''))
    assert.is(r.status, 'completed', JSON.stringify(r.error))
    assert.equal(
      server.chatRequests().map((q) => [q.path, q.body.model]),
      [
        ['/api/chat', 'gemma3:4b'],
        ['/api/chat', 'phi4:mini'],
      ],
    )
  },
)

t('10-1 provider: openai on a node goes to the OpenAI-compatible server', async ({ server }) => {
  const r = await runAgent(server, TEA_AGENT)
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  assert.equal(server.chatRequests().at(-1)?.path, '/v1/chat/completions')
  assert.equal(server.chatRequests().at(-1)?.body.model, 'gpt-4o')
})

t('10-1 a model override sends every node to that model, whatever the node names', async ({ server }) => {
  const r = await runAgent(server, TEA_AGENT, 'ollama:qwen2.5:1.5b')
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  assert.equal(
    server.chatRequests().map((q) => [q.path, q.body.model]),
    [
      ['/api/chat', 'qwen2.5:1.5b'],
      ['/api/chat', 'qwen2.5:1.5b'],
      ['/api/chat', 'qwen2.5:1.5b'],
    ],
  )
})

t("10-9 llm.call's TEA parameters: max_tokens, stop, options, response_format reach both APIs", async ({ server }) => {
  server.script({ content: '{"a": 1}' }, { content: '{"b": 2}' })
  const yaml = `name: params
settings:
  llm: { api_base: BASE, api_key: from-the-file }
nodes:
  - name: local
    uses: llm.call
    with:
      model: ollama:gemma3:4b
      prompt: "one"
      max_tokens: 64
      stop: "###"
      temperature: 0.1
      options: { num_ctx: 4096 }
      response_format: { type: json_object }
    output: { one: "{{ result.parsed }}" }
  - name: compatible
    uses: llm.chat
    with:
      model: openai:llama
      prompt: "two"
      max_tokens: 32
      stop: ["END"]
      options: { top_k: 5 }
    output: { two: "{{ result.content }}" }
`
  const r = await runAgent(server, yaml)
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const [ollama, openai] = server.chatRequests()
  assert.equal(ollama!.body.options, { num_ctx: 4096, temperature: 0.1, num_predict: 64, stop: ['###'] })
  assert.is(ollama!.body.format, 'json')
  assert.equal(r.state.one, { a: 1 })
  assert.equal([openai!.body.max_tokens, openai!.body.stop, openai!.body.top_k], [32, ['END'], 5])
  assert.is(openai!.headers.authorization, 'Bearer from-the-file')
  assert.is(typeof r.state.two, 'string', 'llm.chat answers as llm.call')
})

t("10-9 llm.embed: one text or a list, through Ollama's /api/embed and OpenAI's /v1/embeddings", async ({ server }) => {
  const yaml = `name: embed
settings:
  llm: { api_base: BASE }
nodes:
  - name: one
    uses: llm.embed
    with: { model: "ollama:nomic-embed-text", text: "pumps" }
    output: { v: "{{ result.embedding }}", dims: "{{ result.dimensions }}", m: "{{ result.model }}" }
  - name: many
    uses: llm.embed
    with: { model: "openai:text-embedding-3-small", text: ["a", "bb"], backend: api }
    output: { vs: "{{ result.embeddings }}" }
`
  const r = await runAgent(server, yaml)
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  assert.equal([r.state.v, r.state.dims, r.state.m], [fakeEmbedding('pumps'), 8, 'ollama:nomic-embed-text'])
  assert.equal(r.state.vs, [fakeEmbedding('a'), fakeEmbedding('bb')])
  assert.equal(
    server.requests.filter((q) => q.path.includes('embed')).map((q) => [q.path, q.body.model]),
    [
      ['/api/embed', 'nomic-embed-text'],
      ['/v1/embeddings', 'text-embedding-3-small'],
    ],
  )
})

t('10-9 llm.embed against a server that is not there is LLM_UNREACHABLE', async () => {
  const registry = buildRegistry()
  const { spec } = loadAgentText(
    'name: e\nnodes:\n  - name: a\n    uses: llm.embed\n    with: { model: "ollama:x", text: "t", base_url: "http://127.0.0.1:9" }\n',
    '/tmp/e.yaml',
    registry,
  )
  const llm = createLlmClient({ env: {}, defaults: spec!.settings.llm })
  const r = await startRun(spec!, { store: createMemoryStore(), registry, llm }, { runId: 'r' })
  assert.is(r.error?.code, 'LLM_UNREACHABLE')
})

t("10-9 llm.embed backend: local is TEA's llama.cpp in the process: the GGUF model, which must be named (issue 30)", async () => {
  const registry = buildRegistry()
  const { spec } = loadAgentText(
    'name: e\nnodes:\n  - name: a\n    uses: llm.embed\n    with: { model: "ollama:x", text: "t", backend: "{{ state.b }}" }\n',
    '/tmp/e.yaml',
    registry,
  )
  const llm = createLlmClient({ env: {}, defaults: spec!.settings.llm })
  const r = await startRun(spec!, { store: createMemoryStore(), registry, llm }, { runId: 'r', input: { b: 'local' } })
  await llm.close()
  assert.is(r.error?.code, 'GGUF_NOT_FOUND')
  assert.match(String(r.error?.message), 'provider: local names no GGUF model file')
})

t.run()
