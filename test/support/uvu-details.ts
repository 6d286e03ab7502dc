/**
 * A preload for uvu (scripts/test.mjs passes it with `-r`, after tsx). uvu 0.5's failure printer (`format` in
 * uvu/dist/index.js) calls `err.details.split('\n')`, assuming the string its own assertion errors carry. A
 * TeaError's `details` is an object, so the printer threw inside uvu's `finally`, which swallowed it: the failing
 * test was never reported, the tests after it in the file never ran, and uvu exited 0. This rewrites that one call
 * as uvu's module is compiled, so a non-string `details` is printed as JSON. When uvu's source no longer has the
 * call, loading uvu fails loudly instead of letting the hole reopen in silence.
 */

import Module, { createRequire } from 'node:module'

const target = createRequire(import.meta.url).resolve('uvu')
const CALL = "details.split('\\n')"
const PRINTABLE = "(typeof details === 'string' ? details : JSON.stringify(details, null, 2)).split('\\n')"

type Compile = (this: unknown, content: string, filename: string) => unknown
const proto = Module.prototype as unknown as { _compile: Compile }
const compile = proto._compile
proto._compile = function (content, filename) {
  if (filename !== target) return compile.call(this, content, filename)
  if (!content.includes(CALL))
    throw new Error(`test/support/uvu-details.ts: ${filename} no longer calls ${CALL}; check how this uvu prints details`)
  return compile.call(this, content.replace(CALL, PRINTABLE), filename)
}
