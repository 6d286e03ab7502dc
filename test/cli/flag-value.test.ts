import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { coerceFlag, expects, formatMs, MAX_TIMER_MS, RANGES, rangeOf } from '../../src/cli/flag-value.ts'

test('the default ranges: ints 0..2^31-1, ms 1 ms..30 days, durations 0..3650 days; a timer is held to 2^31-1 ms', () => {
  assert.equal(RANGES, {
    int: { min: 0, max: 2147483647 },
    ms: { min: 1, max: 30 * 86_400_000 },
    duration: { min: 0, max: 3650 * 86_400_000 },
  })
  // Node fires a timer longer than this at once: a --interval-ms past it would poll in a loop.
  assert.is(MAX_TIMER_MS, 2 ** 31 - 1)
})

test('a flag narrows its range with min and max', () => {
  assert.equal(rangeOf({ type: 'int', min: 1, description: '' }), { min: 1, max: 2147483647 })
  assert.equal(rangeOf({ type: 'ms', max: 60_000, description: '' }), { min: 1, max: 60_000 })
})

test('coercion keeps digits only for int and ms, and rounds durations to whole ms', () => {
  const ms = { type: 'ms', description: '' } as const
  assert.equal(coerceFlag('t', ms, '250'), { ok: true, value: 250 })
  for (const raw of ['1e3', '0x10', ' 5', '+5', '5 ', '']) assert.is(coerceFlag('t', ms, raw).ok, false, JSON.stringify(raw))
  assert.equal(coerceFlag('d', { type: 'duration', description: '' }, '1.5s'), { ok: true, value: 1500 })
  assert.equal(coerceFlag('d', { type: 'duration', description: '' }, '0.0004s'), { ok: true, value: 0 })
  assert.equal(coerceFlag('s', { type: 'string', value: 'X', description: '' }, 'as is'), { ok: true, value: 'as is' })
})

test('what a flag expects, as one phrase for messages', () => {
  assert.is(expects({ type: 'int', description: '' }), 'a whole number from 0 to 2147483647')
  assert.is(expects({ type: 'ms', description: '' }), 'a whole number of milliseconds from 1 to 2592000000 (30d)')
  assert.is(expects({ type: 'enum', values: ['a', 'b'], description: '' }), 'one of a, b')
})

test('milliseconds in the largest unit that fits', () => {
  assert.equal([0, 5, 1000, 2000, 90_000, 600_000, 3_600_000, 86_400_000, 2 ** 31 - 1].map(formatMs), [
    '0s',
    '5ms',
    '1s',
    '2s',
    '1.5m',
    '10m',
    '1h',
    '1d',
    '24.9d',
  ])
})

test.run()
