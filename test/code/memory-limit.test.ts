import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { compileCode } from '../../src/code/compile.ts'
import { isTeaError } from '../../src/core/errors.ts'

const LIMIT = 64

async function run(code: string, memoryMb: number | undefined = LIMIT, timeoutMs = 20_000): Promise<unknown> {
  const fn = compileCode(code, { node: 'bomb' })
  const out = await fn({ state: {}, variables: {}, ctx: {}, log: () => {}, ...(memoryMb !== undefined && { memoryMb }) }, timeoutMs)
  // Objects made in the run: context have its Object prototype; compared here as data.
  return JSON.parse(JSON.stringify(out))
}

async function stopped(code: string): Promise<string> {
  try {
    await run(code)
  } catch (e) {
    assert.ok(isTeaError(e, 'NODE_MEMORY_LIMIT'), `expected NODE_MEMORY_LIMIT, got ${String(e)}`)
    return (e as Error).message
  }
  throw new Error('the code was not stopped')
}

const BOMBS: Record<string, string> = {
  'a list of filled arrays': 'const a = []; while (true) a.push(new Array(1e5).fill(0))',
  'a map of objects': 'const m = new Map(); for (let i = 0; ; i++) m.set(i, { i, s: "x" + i })',
  'a growing string kept in pieces': "const a = []; while (true) a.push('x'.repeat(1e6) + a.length)",
  'typed arrays in a loop': 'const a = []; while (true) a.push(new Float64Array(1e6))',
  'one huge typed array': 'return { n: new Uint8Array(2e9).length }',
  'one huge ArrayBuffer': 'return { n: new ArrayBuffer(1e9).byteLength }',
  'a resizable buffer with a huge maximum': 'return { n: new ArrayBuffer(8, { maxByteLength: 2 ** 32 }).byteLength }',
  'an array filled at once': 'return { n: Array(3e8).fill(0).length }',
  'a repeated string': "return { n: 'ab'.repeat(3e8).length }",
  'Array.from a length': 'return { n: Array.from({ length: 3e8 }).length }',
  'concat doubling': 'let a = [1]; for (;;) a = a.concat(a)',
  'the typed array found through a prototype':
    'const C = Object.getPrototypeOf(new Uint8Array(1)).constructor; return { n: new C(2e9).length }',
}

for (const [name, code] of Object.entries(BOMBS)) {
  test(`issue 28 item 6: JavaScript run: code is stopped at its memory limit (NODE_MEMORY_LIMIT): ${name}`, async () => {
    assert.match(await stopped(code), /memory limit of 64 MiB/)
  })
}

test('WebAssembly, whose memory grows by gigabytes a call, is not in the run: context', async () => {
  assert.equal(await run('return { t: typeof WebAssembly }'), { t: 'undefined' })
})

test('ordinary code with the wrapped built-ins behaves as before', async () => {
  const out = await run(`
    class Bytes extends Uint8Array {}
    const b = new Bytes(4)
    const u = Uint8Array.from([1, 2, 3])
    return {
      a: new Array(3).fill(7), c: [1].concat([2], 3), r: 'ab'.repeat(2), p: '7'.padStart(3, '0'),
      isU8: u instanceof Uint8Array, sub: b instanceof Uint8Array && b instanceof Bytes, n: u.length,
      from: Array.from('xy'), buf: new ArrayBuffer(16).byteLength, same: new Uint8Array(1).constructor === Uint8Array,
    }`)
  assert.equal(out, {
    a: [7, 7, 7],
    c: [1, 2, 3],
    r: 'abab',
    p: '007',
    isU8: true,
    sub: true,
    n: 3,
    from: ['x', 'y'],
    buf: 16,
    same: true,
  })
})

test('the process goes on after a stopped bomb: the next code runs, and without a limit nothing is refused', async () => {
  await stopped('const a = []; while (true) a.push(new Array(1e5).fill(0))')
  assert.equal(await run('return { ok: 1 }'), { ok: 1 })
  assert.equal(await run('return { n: new Uint8Array(100 * 1024 * 1024).length }', 0), { n: 100 * 1024 * 1024 })
})

test.run()
