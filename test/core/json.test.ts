import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { checkDepth, JSON_MAX_DEPTH, jsonDepth, jsonOrText, parseJson, parseJsonOrUndefined, valueDepth } from '../../src/core/json.ts'

const nested = (d: number): string => `${'['.repeat(d)}${']'.repeat(d)}`

function code(f: () => unknown): string {
  try {
    f()
  } catch (e) {
    return isTeaError(e) ? e.code : `uncoded ${String(e)}`
  }
  return 'none'
}

test('issue 28 item 1: parseJson reads 128 levels and refuses 129 before parsing; size and syntax are coded too', () => {
  assert.equal(parseJson(nested(JSON_MAX_DEPTH), 'x'), JSON.parse(nested(JSON_MAX_DEPTH)))
  assert.is(
    code(() => parseJson(nested(JSON_MAX_DEPTH + 1), 'x')),
    'INPUT_TOO_DEEP',
  )
  assert.is(
    code(() => parseJson(nested(100_000), 'x')),
    'INPUT_TOO_DEEP',
  )
  assert.is(
    code(() => parseJson('{"a": 1}', 'x', { maxBytes: 4 })),
    'INPUT_TOO_LARGE',
  )
  assert.is(
    code(() => parseJson('{', 'x', { invalid: 'BAD_REQUEST' })),
    'BAD_REQUEST',
  )
})

test('brackets inside strings and escaped quotes do not count toward the depth', () => {
  assert.is(jsonDepth(`{"a": "${'['.repeat(500)}\\"["}`), 1)
  assert.is(jsonOrText(`"${'{'.repeat(300)}"`, '--set x'), '{'.repeat(300))
  assert.is(
    code(() => jsonOrText(nested(300), '--set x')),
    'INPUT_TOO_DEEP',
  )
  assert.is(jsonOrText('not json', '--set x'), 'not json')
  assert.is(parseJsonOrUndefined(nested(300)), undefined)
})

test('valueDepth: scalars 0, a flat object 1, nesting counted without recursion, a shared object walked once', () => {
  assert.is(valueDepth(3), 0)
  assert.is(valueDepth({ a: 1, b: 'x', c: null }), 1)
  assert.is(valueDepth({ a: { b: [1] } }), 3)
  let deep: unknown = 1
  for (let i = 0; i < 100_000; i++) deep = [deep]
  assert.ok(valueDepth(deep, 200) > 200)
  assert.is(
    code(() => checkDepth({ v: deep }, 'its update', JSON_MAX_DEPTH, 'STATE_TOO_DEEP')),
    'STATE_TOO_DEEP',
  )
  const shared = { x: 1 }
  assert.is(valueDepth({ a: shared, b: [shared] }), 3)
})

test.run()
