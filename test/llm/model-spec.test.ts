import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { formatModelSpec, parseModelSpec, resolveModel } from '../../src/llm/model-spec.ts'
import { throwsCode } from '../support/expect.ts'

test('splits provider:model at the first colon, keeping Ollama tags', () => {
  assert.equal(parseModelSpec('ollama:qwen2.5:1.5b'), { provider: 'ollama', model: 'qwen2.5:1.5b' })
  assert.equal(parseModelSpec('openai:gpt-4o-mini'), { provider: 'openai', model: 'gpt-4o-mini' })
  assert.equal(parseModelSpec(' replay:tiny '), { provider: 'replay', model: 'tiny' })
  assert.is(formatModelSpec(parseModelSpec('ollama:llama3.2:1b')), 'ollama:llama3.2:1b')
})

for (const [spec, what] of [
  ['', 'the model is empty'],
  ['qwen2.5', 'no provider prefix'],
  ['anthropic:claude', "unknown provider 'anthropic'"],
  ['qwen2.5:1.5b', "unknown provider 'qwen2.5'"],
  ['ollama:', 'names no model'],
] as const) {
  test(`'${spec}' is LLM_BAD_MODEL (${what}) naming the accepted forms`, () => {
    try {
      parseModelSpec(spec)
      assert.unreachable()
    } catch (e) {
      assert.ok(isTeaError(e, 'LLM_BAD_MODEL'), String(e))
      assert.match(e.message, what)
      assert.match(e.message, 'ollama:<name>')
      assert.match(e.message, 'openai:<name>')
      assert.match(e.message, 'replay:<name>')
    }
  })
}

const NO_ENV = {}
const OLLAMA_ENV = { OLLAMA_HOST: 'http://127.0.0.1:11434' }
const OPENAI_ENV = { OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1' }

test("10-1 TEA's provider beside a bare model name: ollama and openai, whatever the name's colons or slashes", () => {
  assert.equal(resolveModel('gemma3:4b', 'ollama', NO_ENV), { provider: 'ollama', model: 'gemma3:4b' })
  assert.equal(resolveModel('gpt-4o', 'openai', OLLAMA_ENV), { provider: 'openai', model: 'gpt-4o' })
  assert.equal(resolveModel('hf.co/org/model:Q4', 'ollama', NO_ENV), { provider: 'ollama', model: 'hf.co/org/model:Q4' })
  assert.equal(resolveModel('gemma3:4b', 'Ollama', NO_ENV), { provider: 'ollama', model: 'gemma3:4b' })
  // settings' provider: ollama under a node's LiteLLM name; an openai/… name is an OpenAI-compatible server's own
  assert.equal(resolveModel('ollama_chat/phi4', 'ollama', NO_ENV), { provider: 'ollama', model: 'phi4' })
  assert.equal(resolveModel('openai/gpt-oss-20b', 'openai', NO_ENV), { provider: 'openai', model: 'openai/gpt-oss-20b' })
})

test("10-1 tea's own prefix is taken as written, whatever provider says", () => {
  assert.equal(resolveModel('ollama:qwen2.5:1.5b', 'openai', NO_ENV), { provider: 'ollama', model: 'qwen2.5:1.5b' })
  assert.equal(resolveModel('replay:tiny', undefined, NO_ENV), { provider: 'replay', model: 'tiny' })
})

test('10-1 a bare name (or provider: auto) goes to the server the environment names, else the local Ollama', () => {
  assert.equal(resolveModel('gpt-4o', undefined, OPENAI_ENV), { provider: 'openai', model: 'gpt-4o' })
  assert.equal(resolveModel('gpt-4o', 'auto', { OPENAI_API_KEY: 'k' }), { provider: 'openai', model: 'gpt-4o' })
  assert.equal(resolveModel('gemma3:4b', undefined, OLLAMA_ENV), { provider: 'ollama', model: 'gemma3:4b' })
  assert.equal(resolveModel('gemma3:4b', 'auto', { ...OPENAI_ENV, OLLAMA_API_BASE: 'http://x' }), {
    provider: 'ollama',
    model: 'gemma3:4b',
  })
  assert.equal(resolveModel('gpt-4o', undefined, NO_ENV), { provider: 'ollama', model: 'gpt-4o' })
})

test("10-1 LiteLLM's ollama/…, ollama_chat/… and openai/… prefixes, bare or with provider: litellm", () => {
  assert.equal(resolveModel('ollama/gemma3:4b', undefined, OPENAI_ENV), { provider: 'ollama', model: 'gemma3:4b' })
  assert.equal(resolveModel('ollama_chat/phi4', 'litellm', NO_ENV), { provider: 'ollama', model: 'phi4' })
  assert.equal(resolveModel('openai/gpt-4o-mini', 'auto', NO_ENV), { provider: 'openai', model: 'gpt-4o-mini' })
})

test('10-1 providers tea does not have are LLM_BAD_MODEL naming them as TEA features, with a way out; shell needs its name', () => {
  throwsCode(() => resolveModel(undefined, 'shell', NO_ENV), 'LLM_BAD_MODEL', 'provider: shell needs shell_provider')
  assert.equal(resolveModel(undefined, 'shell', NO_ENV, 'claude'), { provider: 'shell', model: 'claude' })
  assert.equal(resolveModel('shell:local', undefined, NO_ENV), { provider: 'shell', model: 'local' })
  const azure = throwsCode(() => resolveModel('gpt-4o', 'azure', NO_ENV), 'LLM_BAD_MODEL', "provider 'azure'")
  assert.match(azure.hint ?? '', 'tea run --model ollama:')
  throwsCode(() => resolveModel('anthropic/claude-3', 'litellm', NO_ENV), 'LLM_BAD_MODEL', "LiteLLM provider 'anthropic'")
  throwsCode(() => resolveModel('  ', 'ollama', NO_ENV), 'LLM_BAD_MODEL', 'empty')
})

test.run()
