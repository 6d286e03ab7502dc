/**
 * Issue 33: TEA's memory.grep over a collection of tea's store, with TEA's result shapes (search_actions.py):
 * like/exact/regex, case, context lines, paths and file_types, limit, TEA's validation errors, an unknown collection,
 * and the regex rule (a pattern that could backtrack exponentially is refused; long lines stay bounded in CPU).
 */

import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { memoryGrep } from '../../../src/actions/memory/grep.ts'
import { validateParams } from '../../../src/actions/registry.ts'
import { createMemoryStore } from '../../../src/store/memory-store.ts'
import { cpuMs } from '../../support/cpu.ts'
import { testContext, type TestContext } from '../context.ts'

const t = suite<{ ctx: TestContext }>('memory.grep')
t.before.each(async (c) => {
  c.ctx = testContext({ node: 'n', store: createMemoryStore() })
  await c.ctx.store.collectionPut('notes', [
    { id: 'notes/pump.md#0', text: 'Pump room\nThe KEY is with Ana.\n  key spare in the box  \nend', metadata: { path: 'notes/pump.md' } },
    { id: 'notes/filter.md#0', text: 'Clean the filter weekly.\nno key here', metadata: { path: 'notes/filter.md' } },
    { id: 'config/site.yml', text: 'key: 42\nname: site', metadata: {} },
  ])
})
t.after.each((c) => c.ctx.cleanup())

async function grep(ctx: TestContext, params: Record<string, unknown>): Promise<any> {
  return memoryGrep.run(validateParams(memoryGrep, { collection: 'notes', ...params }, { node: 'n' }), ctx)
}

t('like: the lines holding the text, with TEA shape', async ({ ctx }) => {
  const r = await grep(ctx, { pattern: 'key' })
  assert.equal(r, {
    success: true,
    matches: [
      { file_path: 'config/site.yml', content_type: 'yaml', line_number: 1, match_text: 'key: 42' },
      { file_path: 'notes/filter.md#0', content_type: 'md', line_number: 2, match_text: 'no key here' },
      { file_path: 'notes/pump.md#0', content_type: 'md', line_number: 3, match_text: 'key spare in the box' },
    ],
    file_count: 3,
    match_count: 3,
    pattern: 'key',
    mode: 'like',
    case_sensitive: true,
  })
  const exact = await grep(ctx, { pattern: 'KEY', mode: 'exact' })
  assert.equal(
    exact.matches.map((m: any) => m.match_text),
    ['The KEY is with Ana.'],
  )
})

t('case_sensitive false, and context lines as TEA extracts them', async ({ ctx }) => {
  const r = await grep(ctx, { pattern: 'KEY is', case_sensitive: false, context_lines: 1 })
  assert.equal(r.matches, [
    {
      file_path: 'notes/pump.md#0',
      content_type: 'md',
      line_number: 2,
      match_text: 'The KEY is with Ana.',
      context: { before: ['Pump room'], match: 'The KEY is with Ana.', after: ['  key spare in the box  '], start_line: 1, end_line: 3 },
    },
  ])
  assert.is(r.case_sensitive, false)
  const wide = await grep(ctx, { pattern: 'Pump', context_lines: 50 })
  assert.equal(wide.matches[0].context, {
    before: [],
    match: 'Pump room',
    after: ['The KEY is with Ana.', '  key spare in the box  ', 'end'],
    start_line: 1,
    end_line: 4,
  })
})

t('regex, paths, file_types, limit', async ({ ctx }) => {
  const r = await grep(ctx, { pattern: '^key:\\s*\\d+$', mode: 'regex' })
  assert.equal(
    r.matches.map((m: any) => m.file_path),
    ['config/site.yml'],
  )
  const ci = await grep(ctx, { pattern: 'the (key|filter)', mode: 'regex', case_sensitive: false })
  assert.equal(
    ci.matches.map((m: any) => m.line_number),
    [1, 2],
  )
  assert.equal((await grep(ctx, { pattern: 'key', paths: ['notes/'] })).file_count, 2)
  assert.equal(
    (await grep(ctx, { pattern: 'key', file_types: ['yml'] })).matches.map((m: any) => m.file_path),
    ['config/site.yml'],
  )
  assert.equal((await grep(ctx, { pattern: 'key', file_types: ['.MD'] })).file_count, 2)
  const one = await grep(ctx, { pattern: 'key', limit: 1 })
  assert.is(one.file_count, 1)
  assert.is(one.match_count, 1)
})

t("TEA's errors: empty pattern, bad mode, invalid regex, unknown collection", async ({ ctx }) => {
  assert.equal(await grep(ctx, { pattern: '  ' }), { success: false, error: 'Pattern cannot be empty', error_type: 'validation_error' })
  assert.equal(await grep(ctx, {}), { success: false, error: 'Pattern cannot be empty', error_type: 'validation_error' })
  const mode = await grep(ctx, { pattern: 'x', mode: 'fuzzy' })
  assert.equal(mode, { success: false, error: 'Invalid mode: fuzzy. Must be one of: like, regex, exact', error_type: 'validation_error' })
  assert.is((await grep(ctx, { pattern: '(unclosed', mode: 'regex' })).error_type, 'validation_error')
  assert.is((await grep(ctx, { pattern: 'x'.repeat(1001) })).error_type, 'validation_error')
  assert.is((await grep(ctx, { pattern: 'x', limit: -1 })).error_type, 'validation_error')
  const none = await grep(ctx, { pattern: 'x', collection: 'nothing-here' })
  assert.is(none.success, false)
  assert.is(none.error_type, 'configuration_error')
  assert.match(none.error, /no collection named "nothing-here"/)
})

t('the regex rule: exponential patterns refused, polynomial ones bounded on long lines', async ({ ctx }) => {
  for (const evil of ['(a+)+$', '(a|aa)*$', '(\\w+\\s?)*$', '(a)\\1', '(?=a)a', '(?<!b)a']) {
    const r = await grep(ctx, { pattern: evil, mode: 'regex' })
    assert.is(r.error_type, 'validation_error', evil)
    assert.match(r.error, /Regex refused/)
  }
  await ctx.store.collectionPut('notes', [{ id: 'long.txt', text: `${'a'.repeat(200_000)}\n${' '.repeat(5000)}\nshort aaa!` }])
  for (const slow of ['a*a*a*a*$', '\\s*\\s*\\s*x', 'a+$']) {
    const { value, ms } = await cpuMs(() => grep(ctx, { pattern: slow, mode: 'regex', paths: ['long'] }))
    assert.ok(ms < 2000, `${slow}: ${ms} ms of CPU`)
    assert.is(value.success, true)
  }
  assert.equal(
    (await grep(ctx, { pattern: 'a+!$', mode: 'regex', paths: ['long'] })).matches.map((m: any) => m.line_number),
    [3],
  )
})

t.run()
