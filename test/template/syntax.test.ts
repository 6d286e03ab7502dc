import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage } from '../../src/core/errors.ts'
import { compileCondition, compileTemplate } from '../../src/template/index.ts'
import { throwsCode } from './helpers.ts'

const where = { node: 'plan', field: 'with.goal' }

function syntax(src: string): { message: string; offset: number } {
  const e = throwsCode(() => compileTemplate(src, where), 'TEMPLATE_SYNTAX')
  assert.equal(e.where, { ...where, template: src })
  return { message: e.message, offset: e.details?.offset as number }
}

test('a syntax error is placed at node, field and template, names the column, and gives the offset in details', () => {
  const e = throwsCode(() => compileTemplate('{{ (state.n }}', where), 'TEMPLATE_SYNTAX')
  assert.is(e.message, `expected ')' to close the parenthesis, found '}}' at column 13 in "{{ (state.n }}"`)
  assert.equal(e.where, { node: 'plan', field: 'with.goal', template: '{{ (state.n }}' })
  assert.equal(e.details, { offset: 12, line: 1, column: 13 })
  assert.is(errorMessage(e), `node 'plan', with.goal: expected ')' to close the parenthesis, found '}}' at column 13 in "{{ (state.n }}"`)
})

test('a syntax error on a later line reports line and column', () => {
  const e = throwsCode(() => compileTemplate('line one\nline {{ 1 + }}', where), 'TEMPLATE_SYNTAX')
  assert.match(e.message, /at line 2, column 13/)
  assert.is(e.details?.offset, 21)
})

test('unclosed delimiters point at the opening one', () => {
  assert.equal(syntax('ab {{ state.n'), { message: syntax('ab {{ state.n').message, offset: 3 })
  assert.match(syntax('ab {{ state.n').message, /'\{\{' is never closed/)
  assert.match(syntax('{% if x').message, /'\{%' is never closed/)
  assert.is(syntax('x {# comment').offset, 2)
  assert.match(syntax('{% raw %} never ends').message, /raw/)
  assert.match(syntax("{{ 'abc }}").message, /string is never closed/)
})

test('unbalanced blocks are reported at the opening tag', () => {
  const r = syntax('a {% if x %}b')
  assert.match(r.message, /'\{% if %\}' is never closed \(missing '\{% endif %\}'\)/)
  assert.is(r.offset, 2)
  assert.match(syntax('{% for x in y %}').message, /missing '\{% endfor %\}'/)
  assert.match(syntax('{% endif %}').message, /without a matching opening tag/)
  assert.match(syntax('{% if a %}{% endfor %}').message, /endfor/)
  assert.match(syntax('{% if a %}{% else %}{% elif b %}{% endif %}').message, /elif/)
})

test('unknown and empty tags list the supported ones', () => {
  assert.match(syntax('{% set x = 1 %}').message, /unknown tag 'set'; supported tags: if, elif, else, endif, for, endfor, raw/)
  assert.match(syntax('{% %}').message, /an empty tag/)
  assert.match(syntax('{{ }}').message, /expected an expression, found '\}\}'/)
})

test('malformed expressions', () => {
  assert.match(syntax('{{ 1 + }}').message, /expected an expression/)
  assert.match(syntax('{{ a b }}').message, /expected '\}\}', found 'b'/)
  assert.match(syntax('{{ a ! b }}').message, /unexpected character "!"/)
  assert.match(syntax('{{ [1, 2 }}').message, /to close the list/)
  assert.match(syntax('{{ {"a" 1} }}').message, /':' after a dict key/)
  assert.match(syntax('{{ a. }}').message, /attribute name after '\.'/)
  assert.match(syntax('{{ a[] }}').message, /index inside/)
  assert.match(syntax('{{ a[1:2:3:4] }}').message, /at most two ':'/)
  assert.match(syntax('{{ "\\u12" }}').message, /bad \\u escape/)
  assert.match(syntax('{% for 1 in x %}{% endfor %}').message, /a name \(a loop variable\)/)
  assert.match(syntax('{% for loop in x %}{% endfor %}').message, /'loop' cannot be a loop variable/)
  assert.match(syntax('{% for x of y %}{% endfor %}').message, /expected 'in'/)
  assert.match(syntax('{% endif extra %}').message, /without a matching/)
  assert.match(syntax('{% if a %}{% else junk %}{% endif %}').message, /expected '%\}'/)
})

test('calling anything is a syntax error that points to filters', () => {
  assert.match(
    syntax('{{ state.name.title() }}').message,
    /calling functions or methods is not allowed in templates, except \.items\(\) .* and now\(\); use a filter/,
  )
  assert.match(syntax('{{ range(10) }}').message, /calling functions/)
})

test('10,000 nested parentheses give a coded error, not a stack overflow', () => {
  const src = `{{ ${'('.repeat(10_000)}1${')'.repeat(10_000)} }}`
  assert.match(syntax(src).message, /nested too deeply/)
  assert.match(syntax(`{{ ${'['.repeat(10_000)} }}`).message, /nested too deeply/)
  assert.match(syntax(`{{ ${'not '.repeat(10_000)} x }}`).message, /nested too deeply/)
  assert.match(syntax(`{{ ${'-'.repeat(10_000)}1 }}`).message, /nested too deeply/)
  assert.match(syntax(`{{ ${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)} }}`).message, /nested too deeply/)
  assert.match(syntax(`{{ ${'{"a":'.repeat(10_000)} }}`).message, /'\{\{' is never closed/)
})

test('very long operator chains and filter chains are bounded too', () => {
  assert.match(syntax(`{{ ${Array(10_000).fill('1').join(' + ')} }}`).message, /expression too deep/)
  assert.match(syntax(`{{ 1${' | abs'.repeat(10_000)} }}`).message, /expression too deep/)
  assert.match(syntax(`{{ 1${' is defined'.repeat(10_000)} }}`).message, /expression too deep/)
  assert.match(syntax('{% if a %}'.repeat(10_000)).message, /blocks nested too deeply/)
  // Within the limits everything still works.
  assert.is(compileTemplate(`{{ ${Array(200).fill('1').join(' + ')} }}`).render({}), 200)
  assert.is(compileTemplate(`{{ ${'('.repeat(40)}2${')'.repeat(40)} }}`).render({}), 2)
})

test('compileCondition reports bare-expression syntax errors against the expression text', () => {
  const e = throwsCode(() => compileCondition('state.n >', where), 'TEMPLATE_SYNTAX')
  assert.match(e.message, /expected an expression, found the end of the expression at column 10 in "state.n >"/)
  assert.is(e.details?.offset, 9)
})

test.run()
