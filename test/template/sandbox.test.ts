import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { compileTemplate, compileValue } from '../../src/template/index.ts'
import { render, throwsCode } from './helpers.ts'

/** Every escape attempt must fail with a coded template error, at compile time or at render time. */
function refused(src: string, scope: Record<string, unknown> = { state: { d: { a: 1 } }, s: 'x' }): string {
  try {
    const out = compileTemplate(src).render(scope)
    assert.unreachable(`${src} rendered ${String(out)}`)
  } catch (e) {
    const code = (e as { code?: string }).code
    assert.ok(code === 'TEMPLATE_SYNTAX' || code === 'TEMPLATE_ERROR', `${src} threw ${String(e)}`)
    return (e as Error).message
  }
  return ''
}

test("the classic ''.constructor.constructor('return process')() escape fails with a coded error", () => {
  const e = throwsCode(() => compileTemplate("{{ ''.constructor.constructor('return process')() }}"), 'TEMPLATE_SYNTAX')
  assert.match(e.message, /access to 'constructor' is not allowed in templates/)
})

test('constructor, __proto__ and prototype are refused by name, by index and when computed', () => {
  for (const src of [
    '{{ state.__proto__ }}',
    '{{ s.prototype }}',
    '{{ __proto__ }}',
    '{{ constructor }}',
    "{{ state['constructor'] }}",
    "{{ ''['constructor'] }}",
    "{{ state['__proto__'] }}",
    "{{ state['__pro' ~ 'to__'] }}",
    "{{ state.d[('con' ~ 'structor')] }}",
    "{{ s['constructor']['constructor']('return process')() }}",
    '{% for x in [1] %}{{ loop.constructor }}{% endfor %}',
    "{% for x in [1] %}{{ loop['constructor'] }}{% endfor %}",
    "{{ [1]['constructor'] }}",
    "{{ [state.d] | join(attribute='constructor') }}",
  ]) {
    assert.match(refused(src), /not allowed|calling functions/, src)
  }
})

test('functions are never reachable: inherited methods read as missing, own functions are refused', () => {
  assert.match(refused('{{ state.d.toString }}'), /'state.d.toString' is undefined/)
  assert.match(refused('{{ s.toString }}'), /is undefined/)
  assert.match(refused('{{ state.d.hasOwnProperty }}'), /is undefined/)
  assert.match(refused('{{ [1].map }}'), /is undefined/)
  assert.match(refused("{{ [1]['push'] }}"), /is undefined/)
  assert.match(refused('{{ toString }}'), /'toString' is undefined/)
  assert.is(render('{{ state.d.toString is defined }}'), false)
  assert.is(render("{{ state.d.valueOf | default('none') }}"), 'none')
  assert.match(refused('{{ fn }}', { fn: () => 1 }), /'fn' is a function/)
  assert.match(refused('{{ o.m }}', { o: { m: () => 1 } }), /'m' is a function/)
  assert.match(refused("{{ o['m'] }}", { o: { m: () => 1 } }), /'m' is a function/)
  assert.match(refused('{{ xs[0] }}', { xs: [() => 1] }), /functions are not visible/)
})

test('objects that are not plain data are opaque', () => {
  assert.match(refused('{{ d.getTime }}', { d: new Date(0) }), /only plain data is visible/)
  assert.match(refused('{{ m.size }}', { m: new Map() }), /only plain data is visible/)
  class Secret {
    key = 'k'
  }
  assert.match(refused('{{ c.key }}', { c: new Secret() }), /only plain data is visible/)
})

test('calling anything but the allow-listed methods (methods.test.ts) is refused', () => {
  for (const src of [
    '{{ s.format() }}',
    '{{ s.constructor() }}',
    '{{ (s)() }}',
    "{{ state.d['a']() }}",
    '{{ lipsum(2) }}',
    '{{ s|upper() () }}',
  ]) {
    assert.match(refused(src), /calling functions|expected|not allowed/, src)
  }
})

test('dict literals cannot smuggle __proto__ into results, and nothing pollutes Object.prototype', () => {
  assert.match(refused("{{ {'__proto__': {'polluted': 1}} }}"), /'__proto__' is not allowed/)
  assert.match(refused("{{ {('__pro' ~ 'to__'): {'polluted': 1}} }}"), /'__proto__' is not allowed/)
  assert.match(refused("{{ {'constructor': 1} }}"), /not allowed/)
  const parsed = render('{{ \'{"__proto__": {"polluted": 1}}\' | fromjson }}') as Record<string, unknown>
  assert.ok(Object.hasOwn(parsed, '__proto__'))
  assert.is(Object.getPrototypeOf(parsed), Object.prototype)
  const value = compileValue(JSON.parse('{"__proto__": {"polluted": "{{ s }}"}, "b": "{{ s }}"}')).render({ s: 'x' }) as Record<
    string,
    unknown
  >
  assert.is(Object.getPrototypeOf(value), Object.prototype)
  assert.equal(Object.keys(value), ['__proto__', 'b'])
  assert.is(({} as Record<string, unknown>).polluted, undefined)
})

test('the engine source contains no eval and no Function constructor', () => {
  const dir = join(import.meta.dirname, '../../src/template')
  for (const file of readdirSync(dir)) {
    const code = readFileSync(join(dir, file), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '')
    assert.not.match(code, /\beval\s*\(|new\s+Function\b|\bFunction\s*\(/, file)
  }
})

test.run()
