/**
 * Issue 33: collections in the store, one contract for both stores (memory and LMDB): exact vector search returns
 * the top k of a reference computation (float64 cosine over the vectors as given), metadata filters with TEA's
 * operators apply before scoring, BM25 ranks as the formula does, and bad input is a coded error that writes nothing.
 */

import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { openLmdbStore } from '../../src/store/lmdb-store.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import type { Store } from '../../src/store/types.ts'
import { rejects } from '../support/expect.ts'
import { rng } from '../support/rng.ts'
import { tempDir } from '../support/temp-dir.ts'

const stores: Array<[string, () => Store]> = [
  ['memory', () => createMemoryStore()],
  ['lmdb', () => openLmdbStore(tempDir('tea-collections-'))],
]

function cosine(a: number[], b: number[]): number {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return dot / Math.sqrt(na * nb)
}

/** The reference: every vector scored in float64, sorted by score (ties by insertion order), the first k. */
function reference(vectors: number[][], query: number[], k: number, keep: (i: number) => boolean = () => true): string[] {
  return vectors
    .map((v, i) => ({ id: `doc${i}`, score: cosine(v, query), i }))
    .filter((x) => keep(x.i))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, k)
    .map((x) => x.id)
}

for (const [kind, open] of stores) {
  const t = suite<{ store: Store }>(`collections (${kind})`)
  t.before.each((c) => {
    c.store = open()
  })
  t.after.each(async (c) => {
    await c.store.close()
  })

  t('exact search returns the reference top k, with and without TEA filters applied before scoring', async ({ store }) => {
    const random = rng(33)
    const dim = 24
    const vectors = Array.from({ length: 300 }, () => Array.from({ length: dim }, () => random() * 2 - 1))
    const docs = vectors.map((vector, i) => ({
      id: `doc${i}`,
      text: `document ${i}`,
      vector,
      metadata: { n: i, kind: i % 3 === 0 ? 'a' : 'b' },
    }))
    // Ids are zero-padded nowhere: insertion order is the tie order of the reference, and lmdb keeps ids sorted as
    // strings; ties do not occur with random vectors, so the two orders cannot disagree.
    await store.collectionPut('notes', docs.slice(0, 150), 'test:model')
    await store.collectionPut('notes', docs.slice(150), 'test:model')
    for (let q = 0; q < 5; q++) {
      const query = Array.from({ length: dim }, () => random() * 2 - 1)
      const hits = await store.collectionQuery('notes', query, 10)
      assert.equal(
        hits.map((h) => h.id),
        reference(vectors, query, 10),
      )
      assert.ok(Math.abs(hits[0]!.score - cosine(vectors[Number(hits[0]!.id.slice(3))]!, query)) < 1e-5)
      const filtered = await store.collectionQuery('notes', query, 7, { kind: 'a', n_gte: 30, n_lt: 250, n_ne: 99 })
      const keep = (i: number) => i % 3 === 0 && i >= 30 && i < 250 && i !== 99
      assert.equal(
        filtered.map((h) => h.id),
        reference(vectors, query, 7, keep),
      )
      const listed = await store.collectionQuery('notes', query, 3, { n_in: [5, 6, 7, 8], n_lte: 7, n_gt: 5 })
      assert.equal(
        listed.map((h) => h.id),
        reference(vectors, query, 3, (i) => i === 6 || i === 7),
      )
    }
  })

  t(
    'a document returns its text and metadata; writing an id again replaces it, delete removes it and its index entries',
    async ({ store }) => {
      await store.collectionPut('kb', [{ id: 'p', text: 'the pump needs a new seal', metadata: { room: 'plant' }, vector: [1, 0] }], 'm')
      await store.collectionPut('kb', [{ id: 'p', text: 'the boiler pressure is low', metadata: { room: 'boiler' }, vector: [0, 1] }], 'm')
      const [hit] = await store.collectionQuery('kb', [0, 1], 1)
      assert.equal(
        [hit!.id, hit!.text, hit!.metadata, Math.round(hit!.score * 1e6) / 1e6],
        ['p', 'the boiler pressure is low', { room: 'boiler' }, 1],
      )
      assert.equal(await store.collectionSearch('kb', 'seal', 5), [], 'the old text left the index')
      assert.equal(
        (await store.collectionSearch('kb', 'boiler', 5)).map((h) => h.id),
        ['p'],
      )
      assert.equal((await store.collectionInfo('kb'))?.count, 1)
      assert.is(await store.collectionDelete('kb', ['p', 'absent']), 1)
      assert.equal(await store.collectionSearch('kb', 'boiler', 5), [])
      assert.equal(await store.collectionQuery('kb', [0, 1], 3), [])
      assert.equal(await store.collectionInfo('kb'), { name: 'kb', count: 0, model: 'm', dim: 2 })
    },
  )

  t('BM25 ranks as the formula does (k1 1.2, b 0.75, idf ln(1 + (N − df + 0.5)/(df + 0.5)))', async ({ store }) => {
    const texts = ['pump seal pump', 'pump valve', 'valve valve valve handle', 'coffee machine descaling', 'seal']
    await store.collectionPut(
      'ft',
      texts.map((text, i) => ({ id: `d${i}`, text, metadata: { i } })),
    )
    const words = texts.map((t) => t.split(' '))
    const avg = words.reduce((s, w) => s + w.length, 0) / words.length
    const score = (doc: string[], terms: string[]) =>
      terms.reduce((s, term) => {
        const df = words.filter((w) => w.includes(term)).length
        const tf = doc.filter((w) => w === term).length
        if (!tf) return s
        const idf = Math.log(1 + (words.length - df + 0.5) / (df + 0.5))
        return s + (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * doc.length) / avg))
      }, 0)
    const hits = await store.collectionSearch('ft', 'Pump SEAL', 10)
    const expected = words
      .map((w, i) => ({ id: `d${i}`, s: score(w, ['pump', 'seal']) }))
      .filter((x) => x.s > 0)
      .sort((a, b) => b.s - a.s)
    assert.equal(
      hits.map((h) => h.id),
      expected.map((x) => x.id),
    )
    hits.forEach((h, i) => assert.ok(Math.abs(h.score - expected[i]!.s) < 1e-9, `${h.id} scores ${h.score}, expected ${expected[i]!.s}`))
    assert.equal(
      (await store.collectionSearch('ft', 'pump seal', 10, { i_ne: 0 })).map((h) => h.id),
      ['d4', 'd1'],
    )
  })

  t(
    'another model or dimension is COLLECTION_MISMATCH naming both; bad documents are DOCUMENT_INVALID and write nothing',
    async ({ store }) => {
      await store.collectionPut('c', [{ id: 'a', text: 'first', vector: [1, 2, 3] }], 'ollama:nomic-embed-text')
      const other = await rejects(
        () => store.collectionPut('c', [{ text: 'x', vector: [1, 2, 3] }], 'openai:text-embedding-3-small'),
        'COLLECTION_MISMATCH',
      )
      assert.match(other.message, /nomic-embed-text.*text-embedding-3-small/)
      const dim = await rejects(
        () => store.collectionPut('c', [{ text: 'x', vector: [1, 2] }], 'ollama:nomic-embed-text'),
        'COLLECTION_MISMATCH',
      )
      assert.match(dim.message, /3-dimension.*2-dimension/)
      await rejects(
        () => store.collectionQuery('c', [1, 2, 3], 1, undefined, 'other:model'),
        'COLLECTION_MISMATCH',
        'other:model',
        'nomic-embed-text',
      )
      const good = { id: 'b', text: 'fine', vector: [0, 1, 0] }
      await rejects(
        () => store.collectionPut('c', [good, { text: 'bad', vector: [1, Number.NaN, 0] }], 'ollama:nomic-embed-text'),
        'DOCUMENT_INVALID',
        'NaN',
      )
      await rejects(
        () => store.collectionPut('c', [good, { text: 'bad', vector: [1, Number.POSITIVE_INFINITY, 0] }], 'ollama:nomic-embed-text'),
        'DOCUMENT_INVALID',
      )
      await rejects(() => store.collectionPut('c', [good, { text: '   ' }]), 'DOCUMENT_INVALID', 'empty')
      await rejects(() => store.collectionPut('c', [good, { text: 'x'.repeat(300_000) }]), 'DOCUMENT_INVALID', '300000')
      await rejects(
        () => store.collectionPut('c', [good, { text: 'zero', vector: [0, 0, 0] }], 'ollama:nomic-embed-text'),
        'DOCUMENT_INVALID',
        'zero',
      )
      await rejects(() => store.collectionPut('c', [good, { text: 'x', vector: [1, 2] }], 'ollama:nomic-embed-text'), 'COLLECTION_MISMATCH')
      assert.equal(await store.collectionGet('c', ['a', 'b']), [
        { id: 'a', text: 'first', metadata: {}, updatedAt: (await store.collectionGet('c', ['a']))[0]!.updatedAt },
        null,
      ])
      assert.is((await store.collectionInfo('c'))?.count, 1, 'nothing of a refused batch was written')
      await rejects(() => store.collectionQuery('nope', [1, 2, 3], 1), 'COLLECTION_NOT_FOUND', 'nope')
      await rejects(() => store.collectionSearch('nope', 'x', 1), 'COLLECTION_NOT_FOUND')
      await rejects(() => store.collectionQuery('c', [1, 2, 3], 0), 'DOCUMENT_INVALID')
      await rejects(() => store.collectionQuery('c', [1, 2, 3], 1, { n_gte: { a: 1 } }), 'DOCUMENT_INVALID', 'n_gte')
      await rejects(() => store.collectionPut('../etc', [good], 'm'), 'DOCUMENT_INVALID', 'collection name')
      assert.is(await store.collectionInfo('nope'), undefined, 'a query does not create the collection')
    },
  )

  t('the embedding cache keeps vectors by model and text', async ({ store }) => {
    assert.equal(await store.embeddingCacheGet('m', ['a']), [null])
    await store.embeddingCachePut(
      'm',
      ['a', 'b'],
      [
        [0.5, 0.25],
        [1, 2],
      ],
    )
    assert.equal(await store.embeddingCacheGet('m', ['b', 'a', 'c']), [[1, 2], [0.5, 0.25], null])
    assert.equal(await store.embeddingCacheGet('other', ['a']), [null])
    await rejects(() => store.embeddingCachePut('m', ['x'], [[Number.NaN]]), 'DOCUMENT_INVALID')
  })

  t('collectionPage reads every document in id order, page after page (memory.grep)', async ({ store }) => {
    const ids = Array.from({ length: 25 }, (_, i) => `d${String(i).padStart(2, '0')}`)
    await store.collectionPut(
      'paged',
      [...ids].reverse().map((id) => ({ id, text: `text ${id}` })),
    )
    const seen: string[] = []
    let after: string | undefined
    for (;;) {
      const page = await store.collectionPage('paged', after, 10)
      seen.push(...page.map((d) => d.id))
      if (page.length < 10) break
      after = page[page.length - 1]!.id
    }
    assert.equal(seen, ids)
    assert.is((await store.collectionPage('paged', 'd03', 1))[0]!.text, 'text d04')
    await rejects(() => store.collectionPage('nothing', undefined, 10), 'COLLECTION_NOT_FOUND')
  })

  t.run()
}
