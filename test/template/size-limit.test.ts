/**
 * A template cannot build more text than `settings.max_template_bytes` (default 1 MiB): the check sits where a
 * render makes something bigger than its inputs, so it fails with TEMPLATE_TOO_LARGE before the memory is spent
 * (issue 9 point 6; the probe's D13 built a 9 GB value in 47 s first).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { compileCondition, compileTemplate, compileValue, DEFAULT_MAX_TEMPLATE_BYTES } from '../../src/template/index.ts'
import { rejection, throwsCode } from '../support/expect.ts'
import { run } from '../engine/harness.ts'
import { cpuMsSync } from '../support/cpu.ts'

const render = (source: string, scope: Record<string, unknown> = {}, maxBytes?: number): unknown =>
  compileTemplate(source, { node: 'n', field: 'with.x' }, maxBytes === undefined ? {} : { maxBytes }).render(scope)

test('the default is 1 MiB', () => {
  assert.is(DEFAULT_MAX_TEMPLATE_BYTES, 1_048_576)
})

test("D13: the probe's 9 GB template fails at once with TEMPLATE_TOO_LARGE naming the setting", () => {
  // CPU time: building the 9 GB would burn it; a busy machine does not add to it.
  const { value: e, ms } = cpuMsSync(() =>
    throwsCode(() => render("{{ ['a' * 9000000] * 1000 }}"), 'TEMPLATE_TOO_LARGE', 'settings.max_template_bytes'),
  )
  assert.ok(ms < 500, `${ms} ms of CPU`)
  assert.match(e.hint ?? '', 'raise settings.max_template_bytes')
  assert.equal(e.where, { node: 'n', field: 'with.x', template: "{{ ['a' * 9000000] * 1000 }}" })
  assert.equal(e.details, { max_template_bytes: 1_048_576 })
})

test('each way of building text is capped: repetition, concatenation, filters, JSON, loops', () => {
  const half = 'x'.repeat(600_000)
  for (const source of [
    "{{ 'a' * 2000000 }}",
    "{{ ['abc'] * 400000 }}",
    '{{ s ~ s }}',
    '{{ s + s }}',
    '{{ [s, s] | join }}',
    "{{ s | replace('x', 'yy') }}",
    '{{ [s, s] | tojson }}',
    '{{ [s, s] }} as text',
    '{% for i in [1, 2, 3] %}{{ s }}{% endfor %}',
    '{{ s }}{{ s }}',
  ]) {
    throwsCode(() => render(source, { s: half }), 'TEMPLATE_TOO_LARGE')
  }
})

test('a value read from state is not built, so it passes whatever its size (by reference)', () => {
  const doc = 'd'.repeat(5_000_000)
  const list = [doc, doc]
  assert.is(render('{{ doc }}', { doc }), doc)
  assert.is(render('{{ list }}', { list }), list)
})

test('the limit is the setting: a smaller one refuses sooner, a larger one allows more', () => {
  assert.is(render("{{ 'a' * 100 }}", {}, 100), 'a'.repeat(100))
  throwsCode(() => render("{{ 'a' * 101 }}", {}, 100), 'TEMPLATE_TOO_LARGE', 'limit of 100 bytes')
  assert.is((render("{{ 'a' * 2000000 }}", {}, 4_000_000) as string).length, 2_000_000)
  const v = compileValue({ a: "{{ 'a' * 50 }}" }, undefined, { maxBytes: 10 })
  throwsCode(() => v.render({}), 'TEMPLATE_TOO_LARGE')
  throwsCode(() => compileCondition("('a' * 50) == ''", undefined, { maxBytes: 10 })({}), 'TEMPLATE_TOO_LARGE')
})

test('one render does not change the limit of the next (the budget is restored after a failure)', () => {
  throwsCode(() => render("{{ 'a' * 101 }}", {}, 100), 'TEMPLATE_TOO_LARGE')
  assert.is((render("{{ 'a' * 500000 }}") as string).length, 500_000)
})

test('an agent whose output template is too large ends failed with TEMPLATE_TOO_LARGE, not left running', async () => {
  const ran = await run(`name: big
settings:
  max_template_bytes: 1000
nodes:
  - name: a
    uses: test.echo
    with: { n: 1 }
    output:
      big: "{{ 'a' * 5000 }}"
`)
  assert.is(ran.status, 'failed')
  assert.is(ran.error?.code, 'TEMPLATE_TOO_LARGE')
  assert.is((await ran.store.getRun('run-1'))?.status, 'failed')
})

test('settings.max_template_bytes must be a positive whole number', async () => {
  const e = await rejection(async () => run('name: x\nsettings:\n  max_template_bytes: 0\nnodes:\n  - name: a\n    run: "return {}"\n'))
  assert.match(String(e), 'AGENT_INVALID settings.max_template_bytes: must be ≥ 1')
})

test.run()
