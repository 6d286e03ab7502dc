import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { fuzzTemplates } from './fuzz.ts'

test('20,000 generated malformed and mutated templates: only coded errors, naming node and field', () => {
  const report = fuzzTemplates(20_000, 20_261_122)
  assert.is(report.count, 20_000)
  assert.is(report.rendered + report.syntaxErrors + report.renderErrors >= 20_000, true)
  // The generator must exercise all three outcomes, or it is not testing much.
  assert.ok(report.rendered > 1000, `rendered only ${report.rendered}`)
  assert.ok(report.syntaxErrors > 1000, `syntax errors only ${report.syntaxErrors}`)
  assert.ok(report.renderErrors > 500, `render errors only ${report.renderErrors}`)
})

test('the fuzzer is deterministic for a seed', () => {
  const { slowestMs: _a, ...a } = fuzzTemplates(500, 7)
  const { slowestMs: _b, ...b } = fuzzTemplates(500, 7)
  assert.equal(a, b)
})

test.run()
