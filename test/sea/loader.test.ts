import { test } from 'uvu'
import * as assert from 'uvu/assert'
// @ts-expect-error plain JavaScript build script without type declarations
import { composeBundle, loaderOf, PROGRAM_MARK as BUILD_MARK } from '../../scripts/build/program.mjs'
import { isVersionOnly, PROGRAM_MARK, programOf } from '../../src/sea/loader.ts'

// The build writes the bundle file (scripts/build/program.mjs) and the loader reads it back (src/sea/loader.ts):
// the two must agree byte for byte, or V8 would be handed another program than the one its code cache was made of.

const LOADER = 'var a = 1\nvar b = "/*tea:program\\n"\n'

test('the build and the loader use the same mark', () => {
  assert.is(BUILD_MARK, PROGRAM_MARK)
})

test('a program written into the bundle comes back unchanged, star-slashes included, after the mark the loader itself quotes', () => {
  const program = 'const re = /a*/g\nconst s = "*/ and **/"\n/* a comment */ module.exports = { re, s }\n'
  const text = composeBundle(LOADER, program)
  assert.not.ok(text.slice(text.indexOf(PROGRAM_MARK) + PROGRAM_MARK.length, -4).includes('*/'), 'the comment closes early')
  assert.is(programOf(text).source, `${program}`)
  assert.is(loaderOf(text), `${LOADER.trimEnd()}\n`)
})

test("the program's first line is the file's line after the mark, so stack traces point into the file", () => {
  const text = composeBundle(LOADER, 'first\nsecond\n')
  const { line } = programOf(text)
  assert.is(text.split('\n')[line], 'first')
})

test('the build refuses a program that contains the escape character or the mark', () => {
  assert.throws(() => composeBundle(LOADER, 'a\x01b'), /x01/)
  assert.throws(() => composeBundle(LOADER, `x = "${PROGRAM_MARK}"`), /mark/)
  assert.throws(() => composeBundle(`var a\n${PROGRAM_MARK}`, 'x'), /mark/)
})

test('a file without a program is an error, not an empty program', () => {
  assert.throws(() => programOf('var a = 1\n'), /carries no program/)
})

test('only a lone --version, -V or version is answered without the program', () => {
  for (const args of [['--version'], ['-V'], ['version']]) assert.ok(isVersionOnly(args), args.join(' '))
  for (const args of [[], ['--version', 'x'], ['run', '--version'], ['version', '--help'], ['-v']])
    assert.not.ok(isVersionOnly(args), args.join(' '))
})

test.run()
