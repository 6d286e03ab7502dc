import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readInput } from '../../src/cli/input.ts'
import { throwsCode } from '../support/expect.ts'

test('--set nests on dots and parses JSON values, after -i', () => {
  assert.equal(readInput('{"a":1,"meta":{"x":1}}', ['meta.owner=ops', 'n=3', 'ok=true', 'tags=["a"]', 'text=hi there'], '/'), {
    a: 1,
    meta: { x: 1, owner: 'ops' },
    n: 3,
    ok: true,
    tags: ['a'],
    text: 'hi there',
  })
})

test('--set refuses __proto__, constructor and prototype anywhere in a key, and nothing leaks onto Object.prototype', () => {
  for (const key of ['__proto__.polluted', 'a.__proto__.polluted', 'constructor.prototype.polluted', 'x.prototype', '__proto__']) {
    throwsCode(() => readInput(undefined, [`${key}=1`], '/'), 'INVALID_INPUT', `--set key '${key}'`, 'is reserved')
  }
  assert.is(({} as Record<string, unknown>).polluted, undefined)
})

test('a key from -i JSON named __proto__ stays data (JSON.parse makes it an own entry)', () => {
  const input = readInput('{"__proto__": {"x": 1}}', [], '/')
  assert.equal(Object.keys(input), ['__proto__'])
  assert.is(({} as Record<string, unknown>).x, undefined)
})

test.run()
