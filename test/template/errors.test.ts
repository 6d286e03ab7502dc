import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage } from '../../src/core/errors.ts'
import { compileTemplate } from '../../src/template/index.ts'
import { render, throwsCode } from './helpers.ts'

const where = { node: 'classify', field: 'with.prompt' }

test('an unknown top-level name is a TEMPLATE_ERROR placed at node, field and template, with a suggestion', () => {
  const e = throwsCode(() => compileTemplate('{{ stat.text }}', where).render({ state: {} }), 'TEMPLATE_ERROR')
  assert.is(e.message, `'stat' is undefined (did you mean 'state'?) in "{{ stat.text }}"`)
  assert.equal(e.where, { node: 'classify', field: 'with.prompt', template: '{{ stat.text }}' })
  assert.equal(e.details, { offset: 3 })
  assert.is(errorMessage(e), `node 'classify', with.prompt: 'stat' is undefined (did you mean 'state'?) in "{{ stat.text }}"`)
  assert.match(e.hint ?? '', /default\('…'\)/)
})

test('an unknown name with nothing close lists the names in scope', () => {
  const e = throwsCode(() => compileTemplate('{{ zzzzzz }}', where).render({ state: {}, result: {} }), 'TEMPLATE_ERROR')
  assert.match(e.message, /'zzzzzz' is undefined \(known names: state, result\)/)
})

test('printing a missing key is an error in text and native mode, never the template text', () => {
  const native = throwsCode(() => compileTemplate('{{ state.missing }}', where).render({ state: {} }), 'TEMPLATE_ERROR')
  assert.match(native.message, /'state.missing' is undefined in "\{\{ state.missing \}\}"/)
  const text = throwsCode(() => compileTemplate('Hi {{ state.missing }}!', where).render({ state: {} }), 'TEMPLATE_ERROR')
  assert.match(errorMessage(text), /^node 'classify', with.prompt: 'state.missing' is undefined/)
  assert.is(text.details?.offset, 6)
})

test('reading through undefined or null is an error naming the part that was missing', () => {
  assert.match(throwsCode(() => render('{{ state.a.b }}'), 'TEMPLATE_ERROR').message, /'state.a' is undefined \(reading 'b'\)/)
  assert.match(throwsCode(() => render('{{ state.nothing.b }}'), 'TEMPLATE_ERROR').message, /'state.nothing' is none \(reading 'b'\)/)
  assert.match(throwsCode(() => render('{{ state.nothing[0] }}'), 'TEMPLATE_ERROR').message, /'state.nothing' is none \(reading '0'\)/)
})

test('a missing key may flow into truthiness and equality, but not into arithmetic, ordering, filters or loops', () => {
  assert.is(render('{% if state.unset %}y{% else %}n{% endif %}'), 'n')
  assert.is(render('{{ not state.unset }}'), true)
  assert.is(render("{{ state.unset == 'x' }}"), false)
  assert.is(render('{{ state.unset == none }}'), true)
  assert.is(render("{{ state.unset or 'fallback' }}"), 'fallback')
  for (const src of [
    '{{ state.unset + 1 }}',
    '{{ state.unset > 1 }}',
    '{{ state.unset | upper }}',
    '{% for x in state.unset %}{% endfor %}',
    "{{ 'a' in state.unset }}",
    '{{ state.unset ~ "x" }}',
    '{{ -state.unset }}',
    '{{ [state.unset] }}',
    "{{ 'x' | default(state.unset) }}",
  ]) {
    const e = throwsCode(() => render(src), 'TEMPLATE_ERROR')
    assert.match(e.message, /'state.unset' is undefined/, src)
  }
})

test('type errors in operators are reported, not coerced', () => {
  assert.match(throwsCode(() => render("{{ 'a' + 1 }}"), 'TEMPLATE_ERROR').message, /unsupported operand types for \+: string and number/)
  assert.match(throwsCode(() => render("{{ 'a' < 1 }}"), 'TEMPLATE_ERROR').message, /cannot compare string < number/)
  assert.match(throwsCode(() => render('{{ 1 / 0 }}'), 'TEMPLATE_ERROR').message, /division by zero/)
  assert.match(throwsCode(() => render('{{ 1 % 0 }}'), 'TEMPLATE_ERROR').message, /division by zero/)
  assert.match(throwsCode(() => render('{% for x in 5 %}{% endfor %}'), 'TEMPLATE_ERROR').message, /cannot loop over '5': it is a number/)
  assert.match(throwsCode(() => render('{{ 1 in 5 }}'), 'TEMPLATE_ERROR').message, /membership in a number/)
  assert.match(throwsCode(() => render('{{ state.xs[::0] }}'), 'TEMPLATE_ERROR').message, /slice step cannot be zero/)
  assert.match(throwsCode(() => render('{% for a, b in [1] %}{% endfor %}'), 'TEMPLATE_ERROR').message, /cannot unpack a number into 2/)
})

test('building a huge string or list is refused instead of exhausting memory', () => {
  assert.match(throwsCode(() => render("{{ 'ab' * 100000000 }}"), 'TEMPLATE_ERROR').message, /result too large/)
  assert.match(throwsCode(() => render('{{ [1, 2] * 100000000 }}'), 'TEMPLATE_ERROR').message, /result too large/)
})

test('nested loops are bounded per render', () => {
  const xs = Array.from({ length: 1000 }, (_, i) => i)
  const e = throwsCode(
    () => render('{% for a in xs %}{% for b in xs %}{% for c in xs %}{% endfor %}{% endfor %}{% endfor %}', { xs }),
    'TEMPLATE_ERROR',
  )
  assert.match(e.message, /loops ran more than 1000000 iterations/)
})

test('values that cannot be printed give a coded error', () => {
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  assert.match(
    throwsCode(() => render('x{{ c }}', { c: cyclic }), 'TEMPLATE_ERROR').message,
    /printing 'c': value cannot be converted to JSON/,
  )
  throwsCode(() => render('x{{ b }}', { b: 10n }), 'TEMPLATE_ERROR')
})

test('a template outside an agent reports without node and field', () => {
  const e = throwsCode(() => compileTemplate('{{ nope }}').render({}), 'TEMPLATE_ERROR')
  assert.is(e.message, `'nope' is undefined in "{{ nope }}"`)
})

test('a long template is quoted as a window around the problem', () => {
  const src = `${'x'.repeat(500)}{{ missing }}${'y'.repeat(500)}`
  const e = throwsCode(() => render(src), 'TEMPLATE_ERROR')
  assert.ok(e.message.length < 400)
  assert.match(e.message, /…"x+\{\{ missing \}\}y+"…$/)
  assert.is(e.where?.template, src)
})

test.run()
