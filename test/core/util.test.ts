import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { once } from '../../src/core/util.ts'

test('once makes its value at the first call only, and keeps it even when it is undefined', () => {
  let made = 0
  const table = once(() => ({ n: ++made }))
  assert.is(made, 0, 'made before it was asked for')
  const first = table()
  assert.is(table(), first)
  assert.equal(first, { n: 1 })
  assert.is(made, 1)
  let calls = 0
  const nothing = once(() => void calls++)
  assert.is(nothing(), undefined)
  assert.is(nothing(), undefined)
  assert.is(calls, 1)
})

test.run()
