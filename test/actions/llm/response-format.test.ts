import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../../src/core/errors.ts'
import { llmActions } from '../../../src/actions/llm/index.ts'
import { validateParams } from '../../../src/actions/registry.ts'
import { toLlmRequest, type LlmParams } from '../../../src/actions/llm/params.ts'

const llmCall = llmActions.find((a) => a.name === 'llm.call')!

const request = (params: unknown) => toLlmRequest(validateParams(llmCall, params) as LlmParams)

test('response_format: json_object written as a string asks for JSON, as {type: json_object} does', () => {
  assert.is(request({ prompt: 'a', response_format: 'json_object' }).format, 'json')
  assert.is(request({ prompt: 'a', response_format: { type: 'json_object' } }).format, 'json')
  assert.is(request({ prompt: 'a', response_format: 'text' }).format, undefined)
})

test('any other response_format string is refused, naming the parameter', () => {
  assert.throws(
    () => request({ prompt: 'a', response_format: 'yaml' }),
    (e: unknown) => isTeaError(e, 'INVALID_PARAMS') && JSON.stringify(e.issues).includes('response_format'),
  )
})

test.run()
