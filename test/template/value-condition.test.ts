import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage } from '../../src/core/errors.ts'
import { compileCondition, compileTemplate, compileValue, referencedRoots, truthy } from '../../src/template/index.ts'
import { SCOPE, throwsCode } from './helpers.ts'

test('truthy follows Jinja: empty things, zero, none and undefined are false', () => {
  for (const v of [undefined, null, false, 0, NaN, '', [], {}, Object.create(null)]) assert.is(truthy(v), false, typeof v)
  for (const v of [true, 1, -1, 'x', ' ', [0], { a: 0 }, new Date(0)]) assert.is(truthy(v), true, String(v))
})

test('compileValue renders every string in a tree and keeps native values', () => {
  const v = compileValue({ prompt: 'Hi {{ state.name }}', n: '{{ state.n }}', list: ['{{ state.xs }}', 'x', 3], deep: { on: true } })
  assert.is(v.static, false)
  assert.equal(v.render(SCOPE), { prompt: 'Hi Ann', n: 5, list: [[1, 2, 3], 'x', 3], deep: { on: true } })
})

test('compileValue returns a static tree itself, and static subtrees by reference', () => {
  const tree = { a: 'plain', b: [1, { c: 'x' }] }
  const v = compileValue(tree)
  assert.is(v.static, true)
  assert.is(v.render(SCOPE), tree)
  const mixed = { fixed: { big: [1, 2, 3] }, live: '{{ state.n }}' }
  const out = compileValue(mixed).render(SCOPE) as typeof mixed
  assert.is(out.fixed, mixed.fixed)
  assert.is(out.live as unknown, 5)
  assert.is(compileValue(42).render({}), 42)
  assert.is(compileValue(null).static, true)
})

test('compileValue errors are placed at the node and the dotted path of the field', () => {
  const v = compileValue({ messages: [{ role: 'user', content: '{{ state.nope }}' }] }, { node: 'ask', field: 'with' })
  const e = throwsCode(() => v.render(SCOPE), 'TEMPLATE_ERROR')
  assert.equal(e.where, { node: 'ask', field: 'with.messages[0].content', template: '{{ state.nope }}' })
  assert.match(errorMessage(e), /^node 'ask', with\.messages\[0\]\.content: 'state\.nope' is undefined/)
  const s = throwsCode(() => compileValue({ a: ['{{ (x }}'] }, { node: 'ask' }), 'TEMPLATE_SYNTAX')
  assert.is(s.where?.field, 'a[0]')
})

test('compileCondition accepts a bare expression or a {{ }} template and sees state and result', () => {
  const scope = { state: { n: 5 }, result: { ok: true, status: 'ok' } }
  assert.is(compileCondition('state.n > 3 and result.ok')(scope), true)
  assert.is(compileCondition("result.status == 'ok'")(scope), true)
  assert.is(compileCondition('{{ state.n > 9 }}')(scope), false)
  assert.is(compileCondition('  {{ result.ok }} ')(scope), true)
  assert.is(compileCondition("state.n in [1, 2] or result.status != 'ok'")(scope), false)
  assert.is(compileCondition('state.n')(scope), true)
  assert.is(compileCondition('state.unset')(scope), false)
  assert.is(compileCondition(true)(scope), true)
})

test('compileCondition over a text template reads false words as false', () => {
  const c = compileCondition('{% if state.n > 3 %}No{% else %}yes{% endif %}')
  assert.is(c({ state: { n: 5 } }), false)
  assert.is(c({ state: { n: 1 } }), true)
  assert.is(compileCondition('{{ state.v }} ')({ state: { v: 'none' } }), true)
  assert.is(compileCondition('x{{ state.v }}')({ state: { v: '' } }), true)
  assert.is(compileCondition('{{ state.v }}{{ "" }}')({ state: { v: 'False' } }), false)
})

test('a condition that cannot be evaluated raises TEMPLATE_ERROR instead of counting as false', () => {
  const c = compileCondition('stat.n > 3', { node: 'route', field: 'goto[0].if' })
  const e = throwsCode(() => c({ state: { n: 1 } }), 'TEMPLATE_ERROR')
  assert.is(errorMessage(e), `node 'route', goto[0].if: 'stat' is undefined (did you mean 'state'?) in "stat.n > 3"`)
  throwsCode(() => compileCondition('state.n > "a"')({ state: { n: 1 } }), 'TEMPLATE_ERROR')
})

test('10-10 a missing key makes a condition false (TEA agents test keys that may be unset); a typo in a name does not', () => {
  const scope = { state: { a: null, n: 5 } }
  for (const expr of [
    'state.unset',
    'state.unset > 3',
    "state.never == 'yes'",
    'state.a.b == 1',
    'state.unset.deep',
    '{{ state.unset > 0 }}',
    '{{ state.unset }} text',
  ]) {
    assert.is(compileCondition(expr)(scope), false, expr)
  }
  assert.is(compileCondition('not state.unset')(scope), true, 'negating a missing key: the key is unset, so true')
  assert.is(compileCondition('state.n > 3')(scope), true)
  throwsCode(() => compileCondition('stat.n > 3')(scope), 'TEMPLATE_ERROR', "did you mean 'state'")
  throwsCode(() => compileCondition("state.n > 'a'")(scope), 'TEMPLATE_ERROR')
})

test('referencedRoots lists the top-level names read, not loop variables or literals', () => {
  assert.equal(referencedRoots('{{ state.a }} {{ result.b | default(goal) }}'), new Set(['state', 'result', 'goal']))
  assert.equal(referencedRoots('{% for x in state.xs %}{{ x }}{{ loop.index }}{% endfor %}{{ loop }}'), new Set(['state', 'loop']))
  assert.equal(referencedRoots('{{ true }}{{ none }} plain'), new Set())
  assert.equal(referencedRoots(compileTemplate('{{ variables.k }}')), new Set(['variables']))
  assert.equal(referencedRoots('no templates'), new Set())
  assert.equal(compileValue({ a: '{{ state.x }}', b: ['{{ subtask.id }}'] }).roots, new Set(['state', 'subtask']))
})

test.run()
