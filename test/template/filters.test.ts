import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { render, throwsCode } from './helpers.ts'

test('tojson serialises data, with an optional indent', () => {
  assert.is(render('{{ state.d | tojson }}'), '{"a":1,"b":2}')
  assert.is(render('{{ [1, "x", none, true] | tojson }}'), '[1,"x",null,true]')
  assert.is(render('{{ {"a": 1} | tojson(2) }}'), '{\n  "a": 1\n}')
  assert.is(render('{{ "q\\"" | tojson }}'), '"q\\""')
})

test('fromjson parses JSON text into native values and fails loudly on bad JSON', () => {
  assert.equal(render('{{ state.json | fromjson }}'), { k: [1, 2], s: 'x' })
  assert.equal(render('{{ (state.json | fromjson).k[1] }}'), 2)
  const e = throwsCode(() => render("{{ 'not json' | fromjson }}"), 'TEMPLATE_ERROR')
  assert.match(e.message, /filter 'fromjson': input is not valid JSON/)
  throwsCode(() => render('{{ state.xs | fromjson }}'), 'TEMPLATE_ERROR')
})

test('length / count of strings, lists and dicts', () => {
  assert.is(render('{{ state.name | length }}'), 3)
  assert.is(render('{{ state.xs | length }}'), 3)
  assert.is(render('{{ state.d | count }}'), 2)
  assert.match(throwsCode(() => render('{{ 5 | length }}'), 'TEMPLATE_ERROR').message, /expected a string, list or dict, got number/)
})

test('default replaces missing and null values, keeps defined ones, and has a truthy mode', () => {
  assert.is(render("{{ state.missing | default('x') }}"), 'x')
  assert.is(render("{{ state.nothing | default('x') }}"), 'x')
  assert.is(render("{{ state.empty | default('x') }}"), '')
  assert.is(render("{{ state.empty | default('x', true) }}"), 'x')
  assert.is(render("{{ state.off | default('x', boolean=true) }}"), 'x')
  assert.is(render("{{ state.name | d('x') }}"), 'Ann')
  assert.is(render('{{ state.missing | default }}'), '')
  assert.equal(render('{{ state.missing | default([]) }}'), [])
  assert.is(render('{{ state.missing.deeper.still | default(7) }}'), 7)
  assert.is(render('{{ nowhere.at.all | default(7) }}'), 7)
  assert.is(render("{{ state.xs[10] | default('none') }}"), 'none')
})

test('upper, lower, capitalize, trim, string', () => {
  assert.is(render("{{ 'aBc' | upper }}"), 'ABC')
  assert.is(render("{{ 'aBc' | lower }}"), 'abc')
  assert.is(render("{{ 'hELLO' | capitalize }}"), 'Hello')
  assert.is(render("{{ '  x \\n' | trim }}"), 'x')
  assert.is(render('{{ state.n | string }}'), '5')
  assert.is(render('{{ state.xs | string }}'), '[1,2,3]')
  assert.is(render('{{ state.nothing | upper }}'), '')
})

test('join, with a separator and with an attribute', () => {
  assert.is(render("{{ state.words | join(', ') }}"), 'a, b, c')
  assert.is(render('{{ state.xs | join }}'), '123')
  assert.is(render("{{ state.deep.list | join('/', attribute='v') }}"), 'first/second')
  assert.is(render("{{ [1, none, 'x'] | join('-') }}"), '1--x')
  throwsCode(() => render("{{ 'abc' | join }}"), 'TEMPLATE_ERROR')
})

test('first and last of lists and strings; empty gives undefined, which default can handle', () => {
  assert.is(render('{{ state.xs | first }}'), 1)
  assert.is(render('{{ state.xs | last }}'), 3)
  assert.is(render('{{ state.name | first }}'), 'A')
  assert.is(render('{{ state.name | last }}'), 'n')
  assert.is(render("{{ [] | first | default('empty') }}"), 'empty')
  throwsCode(() => render('{{ [] | last }}'), 'TEMPLATE_ERROR')
})

test('round: half away from zero, precision, ceil and floor', () => {
  assert.is(render('{{ 2.5 | round }}'), 3)
  assert.is(render('{{ -2.5 | round }}'), -3)
  assert.is(render('{{ state.pi | round(2) }}'), 3.14)
  assert.is(render('{{ 1.005 | round(2) }}'), 1.01)
  assert.is(render("{{ state.pi | round(1, 'ceil') }}"), 3.2)
  assert.is(render("{{ state.pi | round(method='floor') }}"), 3)
  throwsCode(() => render("{{ 'x' | round }}"), 'TEMPLATE_ERROR')
  throwsCode(() => render("{{ 1 | round(1, 'sideways') }}"), 'TEMPLATE_ERROR')
})

test('int and float follow Jinja: numbers and numeric text convert, anything else gives the default', () => {
  assert.is(render('{{ 3.9 | int }}'), 3)
  assert.is(render('{{ -3.9 | int }}'), -3)
  assert.is(render("{{ ' 42 ' | int }}"), 42)
  assert.is(render("{{ '3.7' | int }}"), 3)
  assert.is(render("{{ 'abc' | int }}"), 0)
  assert.is(render("{{ 'abc' | int(-1) }}"), -1)
  assert.is(render('{{ true | int }}'), 1)
  assert.is(render('{{ none | int }}'), 0)
  assert.is(render("{{ '2.5' | float }}"), 2.5)
  assert.is(render("{{ '' | float }}"), 0)
  assert.is(render("{{ 'x' | float(1.5) }}"), 1.5)
  assert.is(render('{{ 7 | float }}'), 7)
})

test('replace: all occurrences, or the first count', () => {
  assert.is(render("{{ 'a-b-c' | replace('-', '+') }}"), 'a+b+c')
  assert.is(render("{{ 'a-b-c' | replace('-', '', 1) }}"), 'ab-c')
  assert.is(render("{{ 'aaa' | replace('a', 'b', count=2) }}"), 'bba')
  assert.is(render("{{ 12321 | replace(2, 'x') }}"), '1x3x1')
})

test('abs, keys, values, items, reverse', () => {
  assert.is(render('{{ -4.5 | abs }}'), 4.5)
  assert.equal(render('{{ state.d | keys }}'), ['a', 'b'])
  assert.equal(render('{{ state.d | values }}'), [1, 2])
  assert.equal(render('{{ state.d | items }}'), [
    ['a', 1],
    ['b', 2],
  ])
  assert.equal(render('{{ state.xs | reverse }}'), [3, 2, 1])
  assert.is(render('{{ state.name | reverse }}'), 'nnA')
  assert.equal(render('{{ state.xs }}'), [1, 2, 3])
  throwsCode(() => render('{{ state.xs | keys }}'), 'TEMPLATE_ERROR')
})

test('filters chain left to right and bind tighter than arithmetic', () => {
  assert.is(render("{{ state.name | upper | replace('N', 'n') | length }}"), 3)
  assert.is(render('{{ 1 + state.xs | length }}'), 4)
  assert.is(render('{{ -2 | abs }}'), 2)
  assert.is(render("{{ 'a' ~ 'b' | upper }}"), 'aB')
})

test('unknown filters and wrong arguments are syntax errors with a suggestion', () => {
  assert.match(throwsCode(() => render('{{ x | uper }}'), 'TEMPLATE_SYNTAX').message, /unknown filter 'uper'; did you mean 'upper'/)
  assert.match(throwsCode(() => render('{{ x | upper(1) }}'), 'TEMPLATE_SYNTAX').message, /takes at most 0 argument/)
  assert.match(throwsCode(() => render("{{ x | default(nope='y') }}"), 'TEMPLATE_SYNTAX').message, /has no argument 'nope'/)
  assert.match(throwsCode(() => render("{{ x | join(d=',', attribute='a', d='b') }}"), 'TEMPLATE_SYNTAX').message, /filter 'join'/)
  throwsCode(() => render("{{ x | default(a=1, 'b') }}"), 'TEMPLATE_SYNTAX')
})

test('tests: defined, undefined, none, not none, and the type tests', () => {
  assert.is(render('{{ state.name is defined }}'), true)
  assert.is(render('{{ state.nope is defined }}'), false)
  assert.is(render('{{ state.a.b is defined }}'), false)
  assert.is(render('{{ unknown_root is defined }}'), false)
  assert.is(render('{{ state.nope is not defined }}'), true)
  assert.is(render('{{ state.nope is undefined }}'), true)
  assert.is(render('{{ state.nothing is none }}'), true)
  assert.is(render('{{ state.nope is none }}'), true)
  assert.is(render('{{ state.n is not none }}'), true)
  assert.is(render('{{ state.n is number and state.name is string and state.flag is boolean }}'), true)
  assert.is(render('{{ state.d is mapping and state.xs is sequence and state.xs is iterable }}'), true)
  assert.is(render('{{ state.n is odd and 4 is even and 9 is divisibleby(3) and 2 is integer }}'), true)
  assert.match(throwsCode(() => render('{{ x is definde }}'), 'TEMPLATE_SYNTAX').message, /unknown test 'definde'; did you mean 'defined'/)
  throwsCode(() => render('{{ state.name is even }}'), 'TEMPLATE_ERROR')
  throwsCode(() => render('{{ state.nope is string }}'), 'TEMPLATE_ERROR')
})

test.run()
