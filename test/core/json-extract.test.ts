import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { extractJson } from '../../src/core/json-extract.ts'

test('parses plain JSON', () => {
  assert.equal(extractJson('{"a":1}'), { ok: true, value: { a: 1 } })
})

test('takes the first fenced block when the whole text is not JSON', () => {
  assert.equal(extractJson('Sure!\n```json\n{"a": [1, 2]}\n```\nDone.'), { ok: true, value: { a: [1, 2] } })
})

test('finds the first balanced object in prose, ignoring braces inside strings', () => {
  const r = extractJson('The answer is {"text": "a } brace", "n": 2} and more {junk')
  assert.equal(r, { ok: true, value: { text: 'a } brace', n: 2 } })
})

test('reports failure with a reason when nothing parses', () => {
  const r = extractJson('no json here {oops')
  assert.is(r.ok, false)
})

test.run()
