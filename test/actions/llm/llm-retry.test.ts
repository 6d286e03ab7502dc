import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../../src/core/errors.ts'
import { validateParams } from '../../../src/actions/registry.ts'
import { llmRetry } from '../../../src/actions/llm/call.ts'
import { createLlmClient } from '../../../src/llm/client.ts'
import { startFakeModelServer } from '../../support/fake-model-server.ts'
import { testContext } from '../context.ts'
import { rejection } from '../../support/expect.ts'

test("llm.retry retries transient failures up to max_retries (TEA's default 3) and answers as llm.call", async () => {
  const server = await startFakeModelServer()
  const ctx = testContext({
    llm: createLlmClient({ env: { OLLAMA_HOST: server.url }, backoffBaseMs: 1 }),
    settings: { llm: { model: 'ollama:tiny' } },
  })
  try {
    server.script({ status: 429, headers: { 'Retry-After': '0' } }, { status: 503 }, { status: 500 }, { content: 'fine' })
    const r = await llmRetry.run(validateParams(llmRetry, { prompt: 'hi', base_delay: 0.5, max_delay: 4 }), ctx)
    assert.equal([r.content, r.attempts], ['fine', 4])
    server.script({ status: 503 }, { status: 503 })
    const e = await rejection(llmRetry.run(validateParams(llmRetry, { prompt: 'hi', max_retries: 1 }), ctx))
    assert.ok(isTeaError(e, 'LLM_HTTP_ERROR'))
    assert.is(server.chatRequests().length, 6)
  } finally {
    ctx.cleanup()
    await server.close()
  }
})

test.run()
