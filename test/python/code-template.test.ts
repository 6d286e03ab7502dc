import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { pythonSource } from '../../src/python/code-template.ts'
import { testContext } from '../actions/context.ts'

const HOSTILE = 'x"; import os; os.system("id > pwned"); y="\\\'\n\r\t\u0000{}'

function render(code: string, state: Record<string, unknown>, variables: Record<string, unknown> = {}): string {
  const ctx = testContext({ state, variables })
  try {
    return pythonSource(code, ctx)
  } finally {
    ctx.cleanup()
  }
}

function refused(code: string, state: Record<string, unknown>): string {
  try {
    render(code, state)
  } catch (e) {
    assert.ok(isTeaError(e, 'CODE_TEMPLATE_UNSAFE'), String(e))
    return (e as Error).message
  }
  throw new Error('expected CODE_TEMPLATE_UNSAFE')
}

test('issue 28 item 4: a value inside a double-quoted string is escaped for it, quotes, backslashes and line breaks included', () => {
  const out = render('name = "{{ state.name }}"', { name: HOSTILE })
  assert.is(out, `name = "x\\"; import os; os.system(\\"id > pwned\\"); y=\\"\\\\\\'\\n\\r\\t\\x00{}"`)
})

test('single, triple and prefixed strings each get the escape their literal needs', () => {
  assert.is(render("a = '{{ state.v }}'", { v: "it's" }), "a = 'it\\'s'")
  assert.is(render('a = """{{ state.v }}"""', { v: 'a"""b\nc' }), 'a = """a\\"\\"\\"b\\nc"""')
  assert.is(render("a = f'{x} {{ state.v }}'", { v: '{__import__("os")}' }), 'a = f\'{x} {{__import__(\\"os\\")}}\'')
  assert.is(render('a = b"{{ state.v }}"', { v: 'é' }), 'a = b"\\xc3\\xa9"')
  assert.is(render('a = u"{{ state.v }}"', { v: 'é' }), 'a = u"é"')
})

test('a raw string takes a value only when it needs no escape', () => {
  assert.is(render('a = r"{{ state.v }}"', { v: 'C:/x' }), 'a = r"C:/x"')
  assert.match(refused('a = r"{{ state.v }}"', { v: 'a"; os.system("id")' }), /raw string/)
})

test('in code, numbers, booleans, null, lists and mappings become Python literals', () => {
  const out = render(
    'n = {{ state.n }}\nb = {{ state.b }}\nz = {{ state.z }}\nl = {{ state.l }}\nm = {{ state.m }}\nneg = {{ state.neg }}',
    {
      n: 3.5,
      b: true,
      z: null,
      l: [1, 'two"', false],
      m: { 'k"': [null] },
      neg: -2,
    },
  )
  assert.is(out, 'n = 3.5\nb = True\nz = None\nl = [1, "two\\"", False]\nm = {"k\\"": [None]}\nneg = (-2)')
})

test('issue 28 item 4: text in code outside a string literal is refused with a coded error, never spliced', () => {
  assert.match(refused('x = {{ state.name }}', { name: '__import__("os").system("id")' }), /outside a string literal/)
  // | tojson makes text too: a list goes in as itself instead.
  assert.match(refused('x = {{ state.l | tojson }}', { l: [1] }), /text in Python code/)
})

test('a value in a comment stays in the comment', () => {
  assert.is(render('# note: {{ state.v }}\nx = 1', { v: 'a\nimport os' }), '# note: a import os\nx = 1')
})

test('inside an f-string field the value is code again, and a string nested there is a string', () => {
  assert.match(refused('a = f"{ {{ state.v }} }"', { v: 'os' }), /outside a string literal/)
  assert.is(render('a = f"{d[\'{{ state.k }}\']}"', { k: "x']" }), "a = f\"{d['x\\']']}\"")
})

test('a string after a comment or a closed string is read in the right place', () => {
  assert.is(render('s = "a#b"  # "{{ state.v }}\nt = "{{ state.v }}"', { v: '"' }), 's = "a#b"  # "\"\nt = "\\""')
  assert.is(render("s = 'it''s'\nt = '{{ state.v }}'", { v: "'" }), "s = 'it''s'\nt = '\\''")
})

test('loops and conditions still work; each value is printed for its place', () => {
  const out = render('xs = [{% for x in state.xs %}"{{ x }}", {% endfor %}]', { xs: ['a"', 'b'] })
  assert.is(out, 'xs = ["a\\"", "b", ]')
})

test("TEA's ${name} of a variable goes through the same printing", () => {
  assert.is(render('a = "${who}"\nb = ${n}\nc = "${unknown}"', {}, { who: 'x"y', n: 2 }), 'a = "x\\"y"\nb = 2\nc = "${unknown}"')
  assert.match(refusedVariable('a = ${who}', { who: 'os.system("id")' }), /outside a string literal/)
})

function refusedVariable(code: string, variables: Record<string, unknown>): string {
  try {
    render(code, {}, variables)
  } catch (e) {
    assert.ok(isTeaError(e, 'CODE_TEMPLATE_UNSAFE'))
    return (e as Error).message
  }
  throw new Error('expected CODE_TEMPLATE_UNSAFE')
}

test.run()
