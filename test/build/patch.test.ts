import { test } from 'uvu'
import * as assert from 'uvu/assert'
// @ts-expect-error plain JavaScript build script without type declarations
import { applyPatches } from '../../scripts/build/patch.mjs'

test('a patch replaces exactly the text it names', () => {
  const out = applyPatches('a new Worker(x) b', 'f.js', [{ why: 'w', find: 'new Worker(x)', replace: 'new Worker(y, {eval:true})' }])
  assert.is(out, 'a new Worker(y, {eval:true}) b')
})

test('a regular-expression patch inserts `$` literally', () => {
  assert.is(applyPatches('read(dict)', 'f.js', [{ why: 'w', find: /read\(dict\)/, replace: '"$1$&"' }]), '"$1$&"')
})

test('a patch whose text is missing fails loudly, naming the file and the patch', () => {
  assert.throws(
    () => applyPatches('something else', 'tinypool/dist/index.js', [{ why: 'tinypool: eval worker', find: 'new Worker(', replace: '' }]),
    (e: Error) => /tinypool: eval worker/.test(e.message) && /found 0/.test(e.message) && /tinypool\/dist\/index\.js/.test(e.message),
  )
})

test('a patch that matches more often than expected fails too', () => {
  assert.throws(() => applyPatches('x x', 'f.js', [{ why: 'once', find: 'x', replace: 'y' }]), /expected 1 occurrence\(s\).*found 2/)
  assert.is(applyPatches('x x', 'f.js', [{ why: 'twice', find: 'x', replace: 'y', count: 2 }]), 'y y')
})

test.run()
