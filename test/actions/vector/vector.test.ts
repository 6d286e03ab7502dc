/**
 * Issue 33: TEA's embedding.create, vector.store, vector.query, vector.index_files, text.chunk and cache.* through
 * tea's real model client against the fake model server (its /api/embed answers each text with a vector derived
 * from it, fakeEmbedding), on a memory store.
 */

import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { validateParams } from '../../../src/actions/registry.ts'
import { textActions } from '../../../src/actions/text/index.ts'
import type { Action } from '../../../src/actions/types.ts'
import { vectorActions } from '../../../src/actions/vector/index.ts'
import { createLlmClient } from '../../../src/llm/client.ts'
import { createMemoryStore } from '../../../src/store/memory-store.ts'
import { rejects } from '../../support/expect.ts'
import { fakeEmbedding, startFakeModelServer, type FakeModelServer } from '../../support/fake-model-server.ts'
import { testContext, type TestContext } from '../context.ts'

const byName = (name: string): Action => [...vectorActions, ...textActions].find((a) => a.name === name)!

const t = suite<{ server: FakeModelServer; ctx: TestContext }>('vector actions')
t.before.each(async (c) => {
  c.server = await startFakeModelServer()
  c.ctx = testContext({
    node: 'n',
    llm: createLlmClient({ env: { OLLAMA_HOST: c.server.url }, backoffBaseMs: 1 }),
    store: createMemoryStore(),
    settings: { llm: { model: 'ollama:embed-tiny' } },
  })
})
t.after.each(async (c) => {
  c.ctx.cleanup()
  await c.server.close()
})

async function run(name: string, params: unknown, ctx: TestContext): Promise<any> {
  const action = byName(name)
  return action.run(validateParams(action, params, { node: 'n' }), ctx)
}

const embedCalls = (s: FakeModelServer) => s.requests.filter((r) => r.path === '/api/embed')

t("embedding.create returns TEA's shapes and embeds a text once: the store caches it by model and text", async ({ server, ctx }) => {
  const one = await run('embedding.create', { text: 'pump seal' }, ctx)
  assert.equal(one, { embedding: fakeEmbedding('pump seal'), model: 'ollama:embed-tiny', dimensions: 8 })
  const list = await run('embedding.create', { text: ['pump seal', 'valve'] }, ctx)
  assert.equal(list, {
    embeddings: [fakeEmbedding('pump seal'), fakeEmbedding('valve')],
    model: 'ollama:embed-tiny',
    count: 2,
    dimensions: 8,
  })
  assert.equal(
    embedCalls(server).map((r) => r.body.input),
    [['pump seal'], ['valve']],
    'the second call asked only for the text not seen before',
  )
  await run('embedding.create', { text: 'pump seal', model: 'ollama:other' }, ctx)
  assert.is(embedCalls(server).length, 3, 'another model is another cache entry')
})

t(
  'vector.store then vector.query: the nearest texts, filtered by metadata first, with ids, scores and metadata',
  async ({ server, ctx }) => {
    const texts = [
      'the pump in room 3 needs a new seal',
      'boiler pressure low',
      'coffee machine needs descaling',
      'seal kit ordered for pump 3',
    ]
    const stored = await run(
      'vector.store',
      { texts, metadata: texts.map((_, i) => ({ n: i, room: i % 2 ? 'b' : 'a' })), collection: 'plant' },
      ctx,
    )
    assert.is(stored.stored, 4)
    assert.is(stored.collection, 'plant')
    assert.is(stored.ids.length, 4)
    const q = 'pump seal'
    const got = await run('vector.query', { query: q, k: 2, collection: 'plant' }, ctx)
    // The reference: cosine over the fake vectors, best first.
    const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0) / Math.hypot(...a) / Math.hypot(...b)
    const ranked = texts.map((text, i) => ({ i, s: cos(fakeEmbedding(text), fakeEmbedding(q)) })).sort((a, b) => b.s - a.s)
    assert.equal(
      got.results.map((r: { text: string }) => r.text),
      ranked.slice(0, 2).map((r) => texts[r.i]),
    )
    assert.equal(Object.keys(got.results[0]).sort(), ['id', 'metadata', 'score', 'text'])
    assert.equal([got.query, got.collection, got.k], [q, 'plant', 2])
    assert.ok(Math.abs(got.results[0].score - ranked[0]!.s) < 1e-5)
    const filtered = await run('vector.query', { query: q, k: 5, collection: 'plant', filter: { room: 'b', n_in: [1, 3] } }, ctx)
    assert.equal(filtered.results.map((r: { metadata: { n: number } }) => r.metadata.n).sort(), [1, 3])
    const before = embedCalls(server).length
    await run('vector.store', { texts: texts.slice(0, 2), ids: ['x', 'y'], collection: 'plant' }, ctx)
    assert.is(embedCalls(server).length, before, 'stored texts are not embedded again')
    assert.equal(await run('vector.delete', { ids: ['x', 'y', 'z'], collection: 'plant' }, ctx), { deleted: 2, collection: 'plant' })
  },
)

t('bad input is a coded error: empty text, an unknown collection, another model, wrong counts', async ({ ctx }) => {
  await rejects(() => run('vector.store', { texts: ['ok', ' '] }, ctx), 'DOCUMENT_INVALID', 'empty')
  await rejects(() => run('vector.query', { query: 'x', collection: 'nothing-here' }, ctx), 'COLLECTION_NOT_FOUND', 'nothing-here')
  await run('vector.store', { texts: ['a text'], collection: 'c' }, ctx)
  await rejects(
    () => run('vector.store', { texts: ['b text'], collection: 'c', model: 'ollama:other-embedder' }, ctx),
    'COLLECTION_MISMATCH',
    'ollama:embed-tiny',
    'ollama:other-embedder',
  )
  await rejects(() => run('vector.store', { texts: ['a', 'b'], ids: ['only-one'] }, ctx), 'DOCUMENT_INVALID', '1 ids for 2 texts')
  await rejects(() => run('vector.store', { texts: ['a'], embeddings: [[1, 2, 3]], collection: 'c' }, ctx), 'COLLECTION_MISMATCH')
})

t('text.chunk cuts overlapping pieces at breaks, in characters or tokens, with per-text metadata', async ({ ctx }) => {
  const text = 'First paragraph about pumps.\n\nSecond paragraph about valves and seals.\n\nThird one.'
  const out = await run('text.chunk', { text: [text, 'short'], size: 45, overlap: 10, metadata: [{ path: 'a.md' }, { path: 'b.md' }] }, ctx)
  assert.equal(out.chunks, [
    'First paragraph about pumps.',
    'pumps.\n\nSecond paragraph about valves and',
    'and seals.\n\nThird one.',
    'short',
  ])
  assert.equal(out.metadata[3], { path: 'b.md', chunk: 0, start: 0 })
  assert.is(out.count, 4)
  const tokens = await run('text.chunk', { text: 'a b c d e f g', size: 3, overlap: 1, unit: 'tokens' }, ctx)
  assert.equal(tokens.chunks, ['a b c', 'c d e', 'e f g'])
  await rejects(() => run('text.chunk', { text: 'x', size: 5, overlap: 5 }, ctx), 'INVALID_PARAMS', 'overlap')
})

t(
  'vector.index_files indexes a folder of notes; indexing again replaces pieces and drops those past a file end',
  async ({ server, ctx }) => {
    mkdirSync(join(ctx.workspace, 'notes/sub'), { recursive: true })
    writeFileSync(join(ctx.workspace, 'notes/pumps.md'), '# Pumps\n\nPump 3 needs a seal.\n\nPump 4 is fine.')
    writeFileSync(join(ctx.workspace, 'notes/sub/boiler.md'), 'The boiler runs at 1.5 bar.')
    writeFileSync(join(ctx.workspace, 'notes/skip.txt'), 'not markdown')
    const first = await run('vector.index_files', { paths: 'notes', pattern: '**/*.md', collection: 'notes' }, ctx)
    assert.equal(first, { success: true, indexed: 4, skipped: 0, errors: [], collection: 'notes', files: 2 })
    const hits = await run('vector.query', { query: 'The boiler runs at 1.5 bar.', k: 1, collection: 'notes' }, ctx)
    assert.equal([hits.results[0].id, hits.results[0].metadata.path], ['notes/sub/boiler.md#0', 'notes/sub/boiler.md'])
    writeFileSync(join(ctx.workspace, 'notes/pumps.md'), '# Pumps\n\nAll pumps fine.')
    const calls = embedCalls(server).length
    await run('vector.index_files', { paths: ['notes'], extensions: ['.md'], collection: 'notes' }, ctx)
    assert.equal(
      embedCalls(server)
        .slice(calls)
        .flatMap((r) => r.body.input),
      ['All pumps fine.'],
      'only the new piece was embedded',
    )
    const all = await ctx.store.collectionList('notes', 100)
    assert.equal(all.map((d) => d.id).sort(), ['notes/pumps.md#0', 'notes/pumps.md#1', 'notes/sub/boiler.md#0'])
    await rejects(() => run('vector.index_files', { paths: '../outside' }, ctx), 'PATH_OUTSIDE_WORKSPACE')
  },
)

t.run()
