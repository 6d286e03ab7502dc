import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { extractJson } from '../../src/core/json-extract.ts'
import { cpuMsSync } from '../support/cpu.ts'

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

test('hostile replies cost one pass: 10 MB of unclosed brackets, of quotes, of small objects', () => {
  const big = 10 * 1024 * 1024
  for (const text of ['{'.repeat(big), '"'.repeat(big), `x ${'{"a" '.repeat(big / 5)}`, 'x {"a": 1} '.repeat(big / 11)]) {
    // CPU time: what the reading cost, whatever else the machine is doing.
    const { ms } = cpuMsSync(() => extractJson(text))
    assert.ok(ms < 1500, `${JSON.stringify(text.slice(0, 10))}… took ${ms.toFixed(0)} ms`)
  }
  assert.equal(extractJson('x {"a": 1} '.repeat(1000)), { ok: true, value: { a: 1 } })
})

test('brackets nested past JSON_MAX_DEPTH (128) levels are refused rather than parsed into a value nothing can walk', () => {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`
  assert.equal(extractJson(deep), { ok: false, reason: 'brackets nested deeper than 128 levels' })
  assert.equal(extractJson(`${'['.repeat(128)}1${']'.repeat(128)}`).ok, true)
  assert.equal(extractJson(`${'['.repeat(129)}1${']'.repeat(129)}`).ok, false)
})

test.run()
