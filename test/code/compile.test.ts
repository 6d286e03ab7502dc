/** The `run:` sandbox (src/code/compile.ts) on its own: what code sees, what it may return, and its time limit. */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { compileCode, compileCodeValue, type CodeScope } from '../../src/code/compile.ts'
import { rejects, throwsCode } from '../support/expect.ts'
import { cpuMs } from '../support/cpu.ts'

const scope = (over: Partial<CodeScope> = {}): CodeScope => ({ state: { n: 2 }, variables: { v: 'x' }, ctx: {}, log: () => {}, ...over })

test('the body sees state, variables and console, and returns an object of updates', async () => {
  const logged: string[] = []
  const run = compileCode('console.log("n is", state.n); return { doubled: state.n * 2, v: variables.v }')
  assert.equal({ ...(await run(scope({ log: (m) => logged.push(m) }), 1000)) }, { doubled: 4, v: 'x' })
  assert.equal(logged, ['n is 2'])
})

test('returning nothing is no update; returning a non-object is CODE_ERROR naming what came back', async () => {
  assert.equal(await compileCode('state.n')(scope(), 1000), {})
  await rejects(compileCode('return [1]')(scope(), 1000), 'CODE_ERROR', 'got an array')
  await rejects(compileCode('return 3')(scope(), 1000), 'CODE_ERROR', 'got number')
})

test('compileCodeValue returns any value, and extra names reach the body', async () => {
  const run = compileCodeValue('return subtask.id + ":" + Object.keys(dependency_results).join()', undefined, {
    names: ['subtask', 'dependency_results'],
  })
  assert.is(await run(scope({ extra: { subtask: { id: 's1' }, dependency_results: { a: 1, b: 2 } } }), 1000), 's1:a,b')
})

test('a syntax error is CODE_ERROR at compile time, with its line and the node', () => {
  const e = throwsCode(() => compileCode('const a = 1\nreturn {', { node: 'n1' }), 'CODE_ERROR', 'syntax error', 'line 2')
  assert.equal(e.where, { node: 'n1' })
})

test("10 TEA's Python that parses as JavaScript fails on a Python method with the fix, not a bare TypeError", async () => {
  const run = compileCode('return {"output": state.get("input", "unknown") + " world!"}', { node: 'echo' })
  await rejects(run(scope(), 1000), 'CODE_ERROR', 'TypeError: state.get is not a function (this run: code ran as JavaScript')
  await rejects(run(scope(), 1000), 'CODE_ERROR', 'add `language: python` to the node, or `settings.run_language: python` to the file')
  const plainError = compileCode('return state.nope()')
  const e = await plainError(scope(), 1000).catch((x: Error) => x)
  assert.not.match(String((e as Error).message), 'language: python', 'other TypeErrors get no hint')
})

test('code has no require and no process of its own', async () => {
  assert.equal(
    { ...(await compileCode('return { r: typeof require, p: typeof process }')(scope(), 1000)) },
    { r: 'undefined', p: 'undefined' },
  )
})

test('what the code throws is CODE_ERROR naming the error type, with the node', async () => {
  const e = await rejects(
    compileCode('throw new RangeError("bad input")', { node: 'n2' })(scope(), 1000),
    'CODE_ERROR',
    'RangeError: bad input',
  )
  assert.is(e.where?.node, 'n2')
})

test('an endless loop stops with NODE_TIMEOUT within a few ms of the limit', async () => {
  for (const body of ['while (true) {}', 'for (;;) {}', 'function* g() { while (true) yield 1 } for (const x of g()) {}']) {
    // CPU time: a loop that was not stopped keeps burning it; a busy machine does not add to it.
    const { ms } = await cpuMs(() => rejects(compileCode(body)(scope(), 50), 'NODE_TIMEOUT', '0.05 s'))
    assert.ok(ms < 1000, `${body} took ${ms} ms of CPU`)
  }
})

test('an awaited promise that never settles stops with NODE_TIMEOUT', async () => {
  await rejects(compileCode('await new Promise(() => {}); return {}')(scope(), 50), 'NODE_TIMEOUT')
})

test('async code that finishes in time returns its value', async () => {
  const run = compileCode('await new Promise((r) => setTimeout(r, 5)); return { done: true }')
  assert.equal({ ...(await run(scope(), 1000)) }, { done: true })
})

test('code the loop guard cannot lex still runs, bounded by the vm timeout instead', async () => {
  // After a block's `}` the lexer takes `/` for a division (loop-guard.test.ts): the guard gives up on this body.
  const lost = 'function f() {} /\'/.test("\'");'
  assert.equal({ ...(await compileCode(`${lost} let i = 0; while (i < 10) i++; return { i }`)(scope(), 1000)) }, { i: 10 })
  const { ms } = await cpuMs(() => rejects(compileCode(`${lost} while (true) {}`)(scope(), 50), 'NODE_TIMEOUT'))
  assert.ok(ms < 1000, `took ${ms} ms of CPU`)
})

test.run()
