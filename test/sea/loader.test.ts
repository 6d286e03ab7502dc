import { appendFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
// @ts-expect-error plain JavaScript build script without type declarations
import { composeBundle, loaderOf, PROGRAM_MARK as BUILD_MARK } from '../../scripts/build/program.mjs'
import { isVersionOnly, PROGRAM_MARK, programOf, readTail, tailOf } from '../../src/sea/loader.ts'
import { tempDir } from '../support/temp-dir.ts'

// The build writes the bundle file (scripts/build/program.mjs) and the loader reads it back (src/sea/loader.ts):
// the two must agree byte for byte, or V8 would be handed another program than the one its code cache was made of.

const LOADER = 'var a = 1\nvar b = "/*tea:program\\n"\n'
const bytes = (text: string): Uint8Array => Buffer.from(text)
// What V8 compiles: the program as a CommonJS module body.
const wrapped = (program: string): string => `(function (exports, require, module, __filename, __dirname) {\n${program}\n})`

test('the build and the loader use the same mark', () => {
  assert.is(BUILD_MARK, PROGRAM_MARK)
})

test('a program written into the bundle comes back unchanged, star-slashes included, after the mark the loader itself quotes', () => {
  const program = 'const re = /a*/g\nconst s = "*/ and **/"\n/* a comment */ module.exports = { re, s }\n'
  const text = composeBundle(LOADER, program)
  assert.not.ok(text.slice(text.indexOf(PROGRAM_MARK) + PROGRAM_MARK.length, -4).includes('*/'), 'the comment closes early')
  assert.is(programOf(bytes(text)).source, wrapped(program))
  assert.is(loaderOf(text), `${LOADER.trimEnd()}\n`)
})

test("the program's first line is the file's line after the mark, so stack traces point into the file", () => {
  const text = composeBundle(LOADER, 'first\nsecond\n')
  const { source, line } = programOf(bytes(text))
  assert.is(text.split('\n')[line], 'first')
  assert.is(source.split('\n')[1], 'first')
})

test('the build refuses a program that contains the escape character or the mark', () => {
  assert.throws(() => composeBundle(LOADER, 'a\x01b'), /x01/)
  assert.throws(() => composeBundle(LOADER, `x = "${PROGRAM_MARK}"`), /mark/)
  assert.throws(() => composeBundle(`var a\n${PROGRAM_MARK}`, 'x'), /mark/)
})

test('a program with escapes at its start and end, or with none, comes back whole', () => {
  for (const program of ['*/x*/', 'plain', '', '*/'])
    assert.is(programOf(bytes(composeBundle(LOADER, program))).source, wrapped(program), JSON.stringify(program))
})

test('a character outside ASCII in the program (which would double its size in memory) is written as an escape that means the same', () => {
  // Regular expression literals are where esbuild leaves them (ours, or a package's such as the NATS client's).
  const program =
    "module.exports = [/[-*\u2022]/.test('\u2022 x'), /(\u00b5s)/.exec('3 \u00b5s')[1], /\ud83d\ude00/u.test('\ud83d\ude00')] // \u2014"
  const source = programOf(bytes(composeBundle(LOADER, program))).source
  assert.ok(/^[\x00-\x7f]*$/.test(source), 'the program is ASCII')
  const module = { exports: undefined as unknown }
  new Function(`return ${source}`)()(undefined, undefined, module)
  assert.equal(module.exports, [true, '\u00b5s', true])
})

// An executable's tail (issue 14): the program and its code cache after the SEA's bytes, found from the file's end.
const tmp = tempDir('tea-tail-test-')
test.after(() => rmSync(tmp, { recursive: true, force: true }))

test('a tail appended to a file comes back whole: program, code cache and line, whatever precedes it', () => {
  const file = join(tmp, 'exe')
  writeFileSync(file, Buffer.alloc(70_000, 0xaa))
  const source = wrapped('module.exports = 42\n')
  const cache = Uint8Array.from({ length: 5000 }, (_, i) => i % 251)
  appendFileSync(file, tailOf({ source, line: 9, cache }))
  const tail = readTail(file)
  assert.ok(tail)
  assert.is(tail.source, source)
  assert.is(tail.line, 9)
  assert.equal([...tail.cache], [...cache])
})

test('a file without a tail, or with a tail cut short, has none (the executable then compiles its tea.cjs asset)', () => {
  const plain = join(tmp, 'plain')
  writeFileSync(plain, 'no tail here, and a file shorter than a footer is fine too')
  assert.is(readTail(plain), undefined)
  writeFileSync(join(tmp, 'tiny'), 'x')
  assert.is(readTail(join(tmp, 'tiny')), undefined)
  const cut = join(tmp, 'cut')
  writeFileSync(cut, tailOf({ source: 'p', line: 0, cache: new Uint8Array(3) }))
  truncateSync(cut, 10)
  assert.is(readTail(cut), undefined)
  // A footer whose lengths reach past the file's start is not believed either.
  const lying = join(tmp, 'lying')
  const bytes = tailOf({ source: 'program', line: 0, cache: new Uint8Array(8) })
  writeFileSync(lying, bytes.subarray(bytes.length - 20))
  assert.is(readTail(lying), undefined)
})

test('a file without a program is an error, not an empty program', () => {
  assert.throws(() => programOf(bytes('var a = 1\n')), /carries no program/)
})

test('only a lone --version, -V or version is answered without the program', () => {
  for (const args of [['--version'], ['-V'], ['version']]) assert.ok(isVersionOnly(args), args.join(' '))
  for (const args of [[], ['--version', 'x'], ['run', '--version'], ['version', '--help'], ['-v']])
    assert.not.ok(isVersionOnly(args), args.join(' '))
})

test.run()
