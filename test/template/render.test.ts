import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { compileTemplate } from '../../src/template/index.ts'
import { render, SCOPE } from './helpers.ts'

test('a string without template syntax is static and renders to itself', () => {
  const t = compileTemplate('plain text { not a tag } 100%')
  assert.is(t.static, true)
  assert.is(t.native, false)
  assert.is(t.render({}), 'plain text { not a tag } 100%')
})

test('exactly one {{ expr }} renders the native value: list, object, number, boolean, null survive', () => {
  assert.equal(render('{{ state.xs }}'), [1, 2, 3])
  assert.equal(render('{{ state.d }}'), { a: 1, b: 2 })
  assert.is(render('{{ state.n }}'), 5)
  assert.is(render('{{ state.flag }}'), true)
  assert.is(render('{{ state.nothing }}'), null)
  assert.is(render('  \n {{ state.n }} \n'), 5)
  assert.is(compileTemplate('{{ state.n }}').native, true)
})

test('a native value is returned by reference, not copied', () => {
  const xs = [1]
  assert.is(render('{{ state.xs }}', { state: { xs } }), xs)
})

test('two tags, or text around one tag, render as text', () => {
  const t = compileTemplate('{{ state.n }}{{ state.n }}')
  assert.is(t.native, false)
  assert.is(t.render(SCOPE), '55')
  assert.is(render('n={{ state.n }}'), 'n=5')
})

test('text mode prints strings as-is, numbers as JavaScript does, booleans lowercase, null as empty, data as JSON', () => {
  assert.is(render('[{{ state.name }}|{{ state.pi }}|{{ state.flag }}|{{ state.off }}|{{ state.nothing }}]'), '[Ann|3.14159|true|false|]')
  assert.is(render('{{ state.xs }};{{ state.d }}; '), '[1,2,3];{"a":1,"b":2}; ')
})

test('literals: numbers, strings with escapes, booleans, none, lists, dicts, tuples', () => {
  assert.is(render('{{ 42 }}'), 42)
  assert.is(render('{{ 1.5e3 }}'), 1500)
  assert.is(render(`{{ 'it\\'s' }}`), "it's")
  assert.is(render('{{ "a\\nb\\t\\u00e9\\x41" }}'), 'a\nb\téA')
  assert.is(render('{{ "\\d" }}'), '\\d')
  assert.is(render('{{ True }}'), true)
  assert.is(render('{{ false }}'), false)
  assert.is(render('{{ none }}'), null)
  assert.is(render('{{ None }}'), null)
  assert.is(render('{{ null }}'), null)
  assert.equal(render('{{ [1, "two", [3], none] }}'), [1, 'two', [3], null])
  assert.equal(render("{{ {'a': 1, \"b\": [state.n], 'c': {'d': {}}} }}"), { a: 1, b: [5], c: { d: {} } })
  assert.equal(render('{{ (1, 2) }}'), [1, 2])
  assert.equal(render('{{ [] }}'), [])
})

test('a list literal is built fresh on every render', () => {
  const t = compileTemplate('{{ [1, 2] }}')
  const a = t.render({}) as number[]
  a.push(3)
  assert.equal(t.render({}), [1, 2])
})

test('attribute and index access, negative indexes, numeric dot-index, length, slices', () => {
  assert.is(render('{{ state.deep.list[1].v }}'), 'second')
  assert.is(render("{{ state['name'] }}"), 'Ann')
  assert.is(render('{{ state.xs[-1] }}'), 3)
  assert.is(render('{{ state.xs.0 }}'), 1)
  assert.is(render('{{ state.deep.list.1.v }}'), 'second')
  assert.is(render('{{ state.xs.length }}'), 3)
  assert.is(render('{{ state.name.length }}'), 3)
  assert.is(render('{{ state.name[0] }}'), 'A')
  assert.equal(render('{{ state.xs[1:] }}'), [2, 3])
  assert.equal(render('{{ state.xs[:-1] }}'), [1, 2])
  assert.equal(render('{{ state.xs[::-1] }}'), [3, 2, 1])
  assert.equal(render('{{ state.xs[::2] }}'), [1, 3])
  assert.is(render('{{ state.name[:2] }}'), 'An')
  assert.is(render('{{ state.d[state.words[0]] }}'), 1)
})

test('arithmetic follows Python: true division, floor division and modulo toward -infinity, power, unary minus', () => {
  assert.is(render('{{ 7 / 2 }}'), 3.5)
  assert.is(render('{{ 7 // 2 }}'), 3)
  assert.is(render('{{ -7 // 2 }}'), -4)
  assert.is(render('{{ -7 % 3 }}'), 2)
  assert.is(render('{{ 2 ** 10 }}'), 1024)
  assert.is(render('{{ -state.n + 1 }}'), -4)
  assert.is(render('{{ 1 + 2 * 3 }}'), 7)
  assert.is(render('{{ (1 + 2) * 3 }}'), 9)
  assert.is(render('{{ true + 1 }}'), 2)
  assert.is(render("{{ 'ab' + 'cd' }}"), 'abcd')
  assert.is(render("{{ 'ab' * 3 }}"), 'ababab')
  assert.equal(render('{{ [0] * 3 }}'), [0, 0, 0])
  assert.equal(render('{{ [1] + [2] }}'), [1, 2])
})

test('~ concatenates as text, binding tighter than + like Jinja', () => {
  assert.is(render("{{ state.name ~ '-' ~ state.n ~ state.nothing ~ state.flag }}"), 'Ann-5true')
  assert.is(render("{{ 'a' ~ state.xs }}"), 'a[1,2,3]')
})

test('comparisons, chained comparisons, in and not in', () => {
  assert.is(render('{{ state.n > 3 }}'), true)
  assert.is(render('{{ state.n <= 4 }}'), false)
  assert.is(render("{{ 'a' < 'b' }}"), true)
  assert.is(render('{{ 1 < state.n < 10 }}'), true)
  assert.is(render('{{ 1 < state.n < 3 }}'), false)
  assert.is(render('{{ state.xs == [1, 2, 3] }}'), true)
  assert.is(render("{{ state.d == {'b': 2, 'a': 1} }}"), true)
  assert.is(render('{{ state.d != state.d }}'), false)
  assert.is(render('{{ 2 in state.xs }}'), true)
  assert.is(render("{{ 'nn' in state.name }}"), true)
  assert.is(render("{{ 'a' in state.d }}"), true)
  assert.is(render("{{ 'z' not in state.d }}"), true)
  assert.is(render('{{ not 2 in state.xs }}'), false)
  assert.is(render('{{ state.nothing == none }}'), true)
})

test('and/or return operands like Python; not negates truthiness', () => {
  assert.is(render("{{ state.empty or 'fallback' }}"), 'fallback')
  assert.is(render("{{ state.name and 'yes' }}"), 'yes')
  assert.is(render('{{ state.off and 1 }}'), false)
  assert.is(render('{{ not state.xs }}'), false)
  assert.is(render('{{ not [] }}'), true)
  assert.is(render('{{ not {} }}'), true)
  assert.is(render('{{ state.flag and state.n > 3 or false }}'), true)
})

test('conditional expression, with and without else', () => {
  assert.is(render("{{ 'big' if state.n > 3 else 'small' }}"), 'big')
  assert.is(render("{{ 'big' if state.n > 9 else 'small' }}"), 'small')
  assert.is(render("[{{ 'x' if state.off }}]"), '[]')
  assert.is(render("{{ 'a' if false else 'b' if true else 'c' }}"), 'b')
})

test('if / elif / else picks the first true branch', () => {
  const src = '{% if state.n > 9 %}A{% elif state.n > 4 %}B{% elif true %}C{% else %}D{% endif %}'
  assert.is(render(src), 'B')
  assert.is(render(src, { state: { n: 1 } }), 'C')
  assert.is(render('{% if state.off %}A{% else %}D{% endif %}'), 'D')
  assert.is(render('{% if state.off %}A{% endif %}'), '')
  assert.is(render('{% if state.unset %}A{% else %}unset{% endif %}'), 'unset')
})

test('for loops expose loop.index, index0, first, last, length, revindex', () => {
  const src =
    '{% for w in state.words %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }}{{ w }};{% endfor %}'
  assert.is(render(src), '10truefalse33a;21falsefalse32b;32falsetrue31c;')
})

test('for loops: nested loops shadow loop, iterate dict keys and string characters, else when empty, if-filter', () => {
  const nested = '{% for a in [1, 2] %}{% for b in [3, 4] %}{{ loop.index }}{{ a }}{{ b }} {% endfor %}{{ loop.index }}|{% endfor %}'
  assert.is(render(nested), '113 214 1|123 224 2|')
  assert.is(render('{% for k in state.d %}{{ k }}={{ state.d[k] }} {% endfor %}'), 'a=1 b=2 ')
  assert.is(render('{% for c in "hey" %}{{ c }}.{% endfor %}'), 'h.e.y.')
  assert.is(render('{% for x in [] %}x{% else %}none{% endfor %}'), 'none')
  assert.is(render('{% for x in state.xs if x > 1 %}{{ x }}/{{ loop.length }} {% endfor %}'), '2/2 3/2 ')
  assert.is(render('{% for k, v in state.d | items %}{{ k }}:{{ v }} {% endfor %}'), 'a:1 b:2 ')
})

test('a loop variable does not leak after the loop; outside a loop, `loop` is an ordinary name', () => {
  assert.is(render('{% for x in [1] %}{% endfor %}{{ x | default("gone") }}'), 'gone')
  assert.is(render('{{ loop }}', { loop: 'mine' }), 'mine')
})

test('comments are dropped and raw blocks are kept verbatim', () => {
  assert.is(render('a{# note {{ x }} #}b'), 'ab')
  assert.is(render('{% raw %}{{ state.n }} {% if %}{% endraw %}!'), '{{ state.n }} {% if %}!')
})

test('whitespace control strips on the marked side, newlines included', () => {
  assert.is(render('a  \n {{- state.n -}} \n b'), 'a5b')
  assert.is(render('a  {{ state.n -}}  b'), 'a  5b')
  assert.is(
    render('<ul>\n  {%- for x in state.xs %}\n  <li>{{ x }}</li>\n  {%- endfor %}\n</ul>'),
    '<ul>\n  <li>1</li>\n  <li>2</li>\n  <li>3</li>\n</ul>',
  )
  assert.is(render('a {#- c -#} b'), 'ab')
  assert.is(render('x {%- raw -%} {{ y }} {%- endraw -%} z'), 'x{{ y }}z')
  assert.is(render('{{ 5 -}}  !'), '5!')
  assert.is(render('{{ 5-1 }}'), 4)
})

test('}} inside a nested dict literal does not close the tag', () => {
  assert.equal(render("{{ {'a': {'b': 1}} }}"), { a: { b: 1 } })
  assert.is(render("{{ '}}' }}"), '}}')
})

test('rendering the same template twice with different scopes gives independent results', () => {
  const t = compileTemplate('{% for x in state.xs %}{{ x }}{% endfor %}')
  assert.is(t.render({ state: { xs: [1, 2] } }), '12')
  assert.is(t.render({ state: { xs: ['a'] } }), 'a')
})

test.run()
