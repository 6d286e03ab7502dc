import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { isTeaError } from '../../../src/core/errors.ts'
import { validateParams } from '../../../src/actions/registry.ts'
import { schemaMerge } from '../../../src/actions/schema/merge.ts'
import { merge, mergeAll } from '../../../src/actions/schema/deep-merge.ts'
import { testContext, type TestContext } from '../context.ts'
import { rejection } from '../../support/expect.ts'

async function run(ctx: TestContext, params: unknown): Promise<Record<string, unknown>> {
  return (await schemaMerge.run(validateParams(schemaMerge, params), ctx)) as Record<string, unknown>
}

async function withContext<T>(f: (ctx: TestContext) => Promise<T>): Promise<T> {
  const ctx = testContext()
  try {
    return await f(ctx)
  } finally {
    ctx.cleanup()
  }
}

test('mappings merge key by key, later values win, lists are replaced, null overrides', () => {
  const base = { a: 1, b: { x: 10, y: 20 }, items: [1, 2, 3], on: true }
  const overlay = { b: { y: 30, z: 40 }, c: 3, items: [4, 5], on: null }
  assert.equal(mergeAll([base, overlay]), { a: 1, b: { x: 10, y: 30, z: 40 }, items: [4, 5], on: null, c: 3 })
  // The inputs are left as they were.
  assert.equal(base, { a: 1, b: { x: 10, y: 20 }, items: [1, 2, 3], on: true })
})

test("an agent file's nodes merge by name, edges by from+to, goto by to; __delete__ removes the match", () => {
  const base = {
    nodes: [
      { name: 'a', v: 1, goto: [{ to: 'b', if: 'x' }] },
      { name: 'b', v: 2 },
    ],
    edges: [{ from: 'a', to: 'b', when: 'x' }],
  }
  const overlay = {
    nodes: [{ name: 'a', v: 10, goto: [{ to: 'b', if: 'y' }, { to: 'c' }] }, { name: 'b', __delete__: true }, { name: 'c' }],
    edges: [{ from: 'a', to: 'b', when: 'y' }],
  }
  assert.equal(merge(base, overlay, ''), {
    nodes: [{ name: 'a', v: 10, goto: [{ to: 'b', if: 'y' }, { to: 'c' }] }, { name: 'c' }],
    edges: [{ from: 'a', to: 'b', when: 'y' }],
  })
})

test('a __proto__ key in a schema stays a key and changes no prototype', () => {
  const overlay = JSON.parse('{"properties": {"__proto__": {"type": "string"}}}')
  const merged = mergeAll([{ properties: { a: { type: 'number' } } }, overlay]) as Record<string, Record<string, unknown>>
  assert.equal(Object.keys(merged.properties!), ['a', '__proto__'])
  assert.equal(Object.getPrototypeOf(merged.properties), Object.prototype)
  assert.equal(({} as Record<string, unknown>).type, undefined)
})

test('schema.merge reads JSON and YAML files from the workspace, merges inline last, and honours output_key', async () => {
  await withContext(async (ctx) => {
    mkdirSync(path.join(ctx.workspace, 'schemas'))
    writeFileSync(
      path.join(ctx.workspace, 'schemas/base.yaml'),
      'type: object\nproperties:\n  id: {type: string}\n  total: {type: number}\nrequired: [id]\n',
    )
    writeFileSync(
      path.join(ctx.workspace, 'schemas/overlay.json'),
      '{"properties": {"total": {"minimum": 0}}, "required": ["id", "total"]}',
    )
    const r = await run(ctx, {
      schemas: [{ path: 'schemas/base.yaml' }, { path: 'schemas/overlay.json' }, { inline: { properties: { notes: { type: 'string' } } } }],
      validate: true,
      output_key: 'extraction_schema',
    })
    const schema = {
      type: 'object',
      properties: { id: { type: 'string' }, total: { type: 'number', minimum: 0 }, notes: { type: 'string' } },
      required: ['id', 'total'],
    }
    assert.equal(r, { success: true, extraction_schema: schema, validation: { valid: true, errors: [], schema } })
  })
})

test("schema.merge returns TEA's failure shape, naming each schema it could not load", async () => {
  await withContext(async (ctx) => {
    const r = await run(ctx, {
      schemas: [{ path: 'missing.json' }, { uses: 'company/schemas@v1#x.json' }, { inline: {} }, { other: 1 }, { path: '../outside.json' }],
    })
    assert.equal(r.success, false)
    assert.equal(r.error, 'Failed to load schemas')
    const errors = r.errors as string[]
    assert.is(errors.length, 4)
    assert.match(errors[0]!, /^Schema 0: .*missing\.json/)
    assert.match(errors[1]!, /^Schema 1: uses: "company\/schemas@v1#x.json" .*give path:/)
    assert.match(errors[2]!, /^Schema 3: Invalid schema spec: must have 'path', 'uses', or 'inline' key/)
    assert.match(errors[3]!, /^Schema 4: .*outside\.json/)
    assert.equal(await run(ctx, { schemas: [] }), { success: false, error: 'No schemas provided' })
  })
})

test('schema.merge validate: true reports what is not JSON Schema, with its path', async () => {
  await withContext(async (ctx) => {
    const r = await run(ctx, {
      schemas: [{ inline: { type: 'object', properties: { a: { type: 'text' }, b: 5 }, required: 'a', minLength: -1 } }],
      validate: true,
    })
    assert.equal(r.success, false)
    assert.equal(r.error, 'Merged schema is not valid JSON Schema')
    const v = r.validation as { valid: boolean; errors: string[]; schema: unknown }
    assert.equal(v.valid, false)
    assert.equal(v.schema, null)
    assert.equal(v.errors.length, 4)
    assert.ok(v.errors.some((e) => e.startsWith('$.properties.a.type: expected one of null, boolean')))
    assert.ok(v.errors.some((e) => e.startsWith('$.properties.b: a schema is an object or a boolean')))
    assert.ok(v.errors.some((e) => e.startsWith('$.required: expected an array of distinct strings')))
    assert.ok(v.errors.some((e) => e.startsWith('$.minLength: expected a non-negative integer')))
  })
})

test('schema.merge refuses a schema list past its bound and a file past 1 MiB', async () => {
  const e = await rejection(withContext((ctx) => run(ctx, { schemas: Array.from({ length: 101 }, () => ({ inline: {} })) })))
  assert.ok(isTeaError(e, 'INVALID_PARAMS'))
  await withContext(async (ctx) => {
    writeFileSync(path.join(ctx.workspace, 'big.json'), `{"a": "${'x'.repeat(1024 * 1024)}"}`)
    const r = await run(ctx, { schemas: [{ path: 'big.json' }] })
    assert.equal(r.success, false)
    assert.match((r.errors as string[])[0]!, /more than max_bytes 1048576/)
  })
})

test('schemas nested past 128 levels are refused with INVALID_PARAMS, not a stack overflow', async () => {
  let deep: Record<string, unknown> = {}
  const top = deep
  for (let i = 0; i < 200; i++) deep = (deep.a = {}) as Record<string, unknown>
  const e = await rejection(withContext((ctx) => run(ctx, { schemas: [{ inline: top }, { inline: top }] })))
  assert.ok(isTeaError(e, 'INVALID_PARAMS'))
  assert.match(e.message, 'schema.merge: the schemas nest deeper than 128 levels')
})

test.run()
