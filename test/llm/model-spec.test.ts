import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { formatModelSpec, parseModelSpec } from '../../src/llm/model-spec.ts'

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

test.run()
