/**
 * The loop guard rewrites user code, so it is tested directly: every loop form gets its check, and nothing that
 * only looks like a loop (strings, comments, regexes, template literals, property names) is touched. Each
 * rewrite is also compiled and run, so a rewrite that changes what code computes fails here.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { guardBody, guardLoops, UnguardableCode } from '../../src/code/loop-guard.ts'

const TICK = '(++__t & 1023 || __g())'

/** Runs a guarded body with a guard that counts its calls, returning the body's value and the count. */
function runGuarded(body: string): { value: unknown; guardCalls: number } {
  let guardCalls = 0
  const g = (): true => {
    guardCalls++
    return true
  }
  function* gi(it: Iterable<unknown>): Generator<unknown> {
    yield* it
  }
  const value = new Function('__g', '__gi', guardBody(body))(g, gi)
  return { value, guardCalls }
}

test('while and do-while conditions get the check', () => {
  assert.is(guardLoops('while (i < 3) i++'), `while (${TICK} && (i < 3)) i++`)
  assert.is(guardLoops('do { i++ } while(i < 3)'), `do { i++ } while(${TICK} && (i < 3))`)
})

test('a three-part for gets the check in its condition, an empty condition becomes the check alone', () => {
  assert.is(guardLoops('for (let i = 0; i < n; i++) {}'), `for (let i = 0; ${TICK} && (i < n); i++) {}`)
  assert.is(guardLoops('for (;;) break'), `for (; ${TICK};) break`)
})

test('for-of iterates through the guard; for-in and for await are left alone', () => {
  assert.is(guardLoops('for (const x of xs) y(x)'), 'for (const x of __gi( xs)) y(x)')
  assert.is(guardLoops('for (const k in o) y(k)'), 'for (const k in o) y(k)')
  assert.is(guardLoops('for await (const x of xs) y(x)'), 'for await (const x of xs) y(x)')
})

test('nested loops are each guarded, inside conditions too', () => {
  const out = guardLoops('for (let i = 0; i < 2; i++) { while (j < i) j++ }')
  assert.is(out.split(TICK).length - 1, 2)
})

test('loop words inside strings, template literals, comments and regexes are not rewritten', () => {
  for (const code of [
    `const s = "while (true) {}"`,
    `const s = 'for (;;) {}'`,
    'const s = `while (x) ${"for (;;)"}`',
    '// while (true) {}',
    '/* for (;;) {} */',
    'const r = /while (x)/.test(s)',
  ]) {
    assert.is(guardLoops(code), code, code)
  }
})

test('property names that are loop words (x.while, obj.for) are not loops', () => {
  assert.is(guardLoops('o.while (1)'), 'o.while (1)')
  assert.is(guardLoops('o.for(1)'), 'o.for(1)')
})

test('a division after a closing bracket is not taken for a regex (the loop after it is still guarded)', () => {
  const out = guardLoops('const a = (b) / 2; while (a < 1) {}')
  assert.ok(out.includes(`while (${TICK} && (a < 1))`), out)
})

test('a regex right after an if (…) head is lexed as a regex, so the loop after it is guarded', () => {
  const out = guardLoops(`if (ok) /'/.test("'"); while (true) {}`)
  assert.ok(out.endsWith(`while (${TICK} && (true)) {}`), out)
})

test('when the lexer loses track (an unterminated token, an unbalanced head) it throws, never leaves a loop unguarded', () => {
  // After a block's `}` the lexer reads `/` as a division, so the regex's quote opens a string that swallows the
  // loop; the string then runs unterminated and the mistake shows.
  for (const code of ['while (x', 'function f() {} /\'/.test("\'"); while (true) {}', 'const s = "open', '/* open', 'x = /open\n/']) {
    assert.throws(
      () => guardLoops(code),
      (e: unknown) => e instanceof UnguardableCode,
      code,
    )
  }
})

test('guarded code computes what the original computes, and calls the guard once per 1,024 iterations', () => {
  const body =
    'let s = 0; for (let i = 0; i < 5000; i++) s += i; let j = 0; while (j < 3000) j++; for (const x of [1, 2, 3]) s += x; return [s, j]'
  const { value, guardCalls } = runGuarded(body)
  assert.equal(value, [12497506, 3000])
  // 5,001 for-condition checks and 3,001 while-condition checks share one counter: 8,002 / 1,024 = 7 calls.
  assert.is(guardCalls, 7)
  assert.equal(new Function(body)(), value)
})

test('a runaway loop reaches the guard, which can stop it', () => {
  const stop = (): never => {
    throw new Error('deadline')
  }
  assert.throws(() => new Function('__g', '__gi', guardBody('while (true) {}'))(stop, null), /deadline/)
})

test.run()
