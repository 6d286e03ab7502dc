import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { toJsonSchema } from '@valibot/to-json-schema'
import { isTeaError } from '../../../src/core/errors.ts'
import type { Action } from '../../../src/actions/types.ts'
import { jsonActions } from '../../../src/actions/json/index.ts'
import { testContext } from '../context.ts'
import { rejection } from '../../support/expect.ts'

const byName = (name: string): Action => jsonActions.find((a) => a.name === name)!

async function run(name: string, params: unknown): Promise<Record<string, unknown>> {
  const ctx = testContext()
  try {
    const action = byName(name)
    return (await action.run(v.parse(action.params, params), ctx)) as Record<string, unknown>
  } finally {
    ctx.cleanup()
  }
}

test('json.parse parses plain JSON', async () => {
  assert.equal(await run('json.parse', { text: ' {"a": [1, true, null]} ' }), { data: { a: [1, true, null] } })
})

test('json.parse takes JSON out of a code fence and out of prose', async () => {
  assert.equal(await run('json.parse', { text: 'Here:\n```json\n{"ok": 1}\n```' }), { data: { ok: 1 } })
  assert.equal(await run('json.parse', { text: 'The list is [1, 2, "]"] as asked.' }), { data: [1, 2, ']'] })
})

test('json.parse strict accepts only a text that is exactly JSON', async () => {
  assert.equal(await run('json.parse', { text: '[1]', strict: true }), { data: [1] })
  const e = await rejection(run('json.parse', { text: 'Sure: {"a": 1}', strict: true }))
  assert.ok(isTeaError(e, 'JSON_PARSE_ERROR'))
})

test('json.parse returns default as data only when parsing fails', async () => {
  assert.equal(await run('json.parse', { text: 'no json', default: { empty: true } }), { data: { empty: true } })
  assert.equal(await run('json.parse', { text: 'no json', default: null }), { data: null })
  assert.equal(await run('json.parse', { text: '{"a": 2}', default: { empty: true } }), { data: { a: 2 } })
})

test('json.parse failure is JSON_PARSE_ERROR with the reason and the first 200 characters', async () => {
  const text = 'I cannot answer that {oops ' + 'x'.repeat(400)
  const e = await rejection(run('json.parse', { text }))
  assert.ok(isTeaError(e, 'JSON_PARSE_ERROR'))
  assert.match(e.message, 'no JSON object or array found')
  assert.match(e.message, text.slice(0, 200))
  assert.not.match(e.message, text.slice(0, 201))
  assert.is(e.details?.text, text.slice(0, 200) + '…')
})

const user = {
  user: { name: 'Ada', tags: ['x', 'y'], secret: 's' },
  items: [
    { id: 1, v: 'a' },
    { id: 2, v: 'b' },
  ],
}

test('json.transform mapping evaluates bare expressions and templates over data, keeping constants', async () => {
  const r = await run('json.transform', {
    data: user,
    mapping: {
      name: 'data.user.name',
      first_tag: 'data.user.tags[0]',
      greeting: 'Hello {{ data.user.name }}',
      nested: { id: 'data.items[1].id', fixed: 42, flag: true },
    },
  })
  assert.equal(r, { result: { name: 'Ada', first_tag: 'x', greeting: 'Hello Ada', nested: { id: 2, fixed: 42, flag: true } } })
})

test('json.transform mapping expressions use the template language: filters, operators, conditionals', async () => {
  const r = await run('json.transform', {
    data: user,
    mapping: { count: 'data.items | length', label: "'#' ~ data.items[0].id", big: "'yes' if data.items | length > 1 else 'no'" },
  })
  assert.equal(r, { result: { count: 2, label: '#1', big: 'yes' } })
})

test('json.transform mapping of an unknown name is TEMPLATE_ERROR, not the template text', async () => {
  const e = await rejection(run('json.transform', { data: {}, mapping: { x: 'nothing.here' } }))
  assert.ok(isTeaError(e, 'TEMPLATE_ERROR'), String(e))
})

test('json.transform mapping renders through ctx.render with data in scope', async () => {
  const seen: unknown[] = []
  const ctx = testContext({
    render: (value, extra) => {
      seen.push(value, extra)
      return 'rendered'
    },
  })
  const r = await byName('json.transform').run(v.parse(byName('json.transform').params, { data: 7, mapping: { a: 'data' } }), ctx)
  ctx.cleanup()
  assert.equal(r, { result: 'rendered' })
  assert.equal(seen, [{ a: '{{ data }}' }, { data: 7 }])
})

test('json.transform pick keeps only the given dot-paths, per item for a list', async () => {
  assert.equal(await run('json.transform', { data: user, pick: ['user.name', 'items.0.id', 'missing.path'] }), {
    result: { user: { name: 'Ada' }, items: { 0: { id: 1 } } },
  })
  assert.equal(await run('json.transform', { data: user.items, pick: ['id'] }), { result: [{ id: 1 }, { id: 2 }] })
})

test('json.transform omit drops dot-paths without touching the input', async () => {
  const data = structuredClone(user)
  const r = await run('json.transform', { data, omit: ['user.secret', 'user.tags[0]', 'items'] })
  assert.equal(r, { result: { user: { name: 'Ada', tags: ['y'] } } })
  assert.equal(data, user)
})

test('json.transform refuses mapping with pick, no operation, and prototype paths', async () => {
  for (const params of [
    { data: {}, mapping: { a: 'data' }, pick: ['a'] },
    { data: {} },
    { data: {}, pick: ['__proto__.polluted'] },
    { data: {}, omit: ['a..b'] },
  ]) {
    const e = await rejection(run('json.transform', params))
    assert.ok(isTeaError(e, 'INVALID_PARAMS'), `${JSON.stringify(params)} → ${String(e)}`)
  }
  assert.is(({} as Record<string, unknown>).polluted, undefined)
})

test('every json action has a one-sentence description and params convertible to a described JSON Schema', () => {
  for (const action of jsonActions) {
    assert.match(action.description, /^[A-Z][^]*\.$/)
    const schema = toJsonSchema(action.params) as { properties: Record<string, { description?: string }> }
    for (const [key, prop] of Object.entries(schema.properties)) assert.ok(prop.description, `${action.name}.${key}`)
  }
})

test.run()
