/**
 * Issue 33 through the built bundle: two `tea run` processes writing one collection of one data dir at the same
 * time both land (each write is its own LMDB transaction), a third process's exact search over all of it returns
 * the reference top k, a write of another dimension fails with COLLECTION_MISMATCH and writes nothing, and
 * memory.grep finds an ltm entry's line.
 */

import { writeFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { collect, scratch, spawnTea, tea } from './cli.ts'
import { rng } from '../support/rng.ts'

const DIM = 16
const PER_NODE = 40
const NODES = 5

/** An agent whose nodes each store PER_NODE of the input's documents, one transaction per node. */
function writer(): string {
  const nodes = Array.from(
    { length: NODES },
    (_, n) => `  - name: put${n}
    uses: vector.store
    with:
      texts: "{{ state.texts[${n * PER_NODE}:${(n + 1) * PER_NODE}] }}"
      ids: "{{ state.ids[${n * PER_NODE}:${(n + 1) * PER_NODE}] }}"
      embeddings: "{{ state.vectors[${n * PER_NODE}:${(n + 1) * PER_NODE}] }}"
      metadata: { writer: "{{ state.writer }}" }
      collection: shared
      model: "test:model"
    output: put${n}
`,
  )
  return `name: writer\nnodes:\n${nodes.join('')}`
}

const READER = `name: reader
nodes:
  - name: q
    uses: vector.query
    with: { embedding: "{{ state.query }}", k: 10, collection: shared, filter: "{{ state.filter }}" }
    output: found
`

function cosine(a: number[], b: number[]): number {
  let d = 0
  let na = 0
  let nb = 0
  a.forEach((x, i) => {
    d += x * b[i]!
    na += x * x
    nb += b[i]! * b[i]!
  })
  return d / Math.sqrt(na * nb)
}

test('two tea run processes write one collection at once; a third finds the reference top k over both', async () => {
  const s = scratch()
  try {
    writeFileSync(s.path('writer.yaml'), writer())
    writeFileSync(s.path('reader.yaml'), READER)
    const random = rng(7)
    const docs = ['a', 'b'].map((w) =>
      Array.from({ length: PER_NODE * NODES }, (_, i) => ({ id: `${w}${i}`, vector: Array.from({ length: DIM }, () => random() * 2 - 1) })),
    )
    const input = (w: number) =>
      JSON.stringify({
        writer: w ? 'b' : 'a',
        ids: docs[w]!.map((d) => d.id),
        texts: docs[w]!.map((d) => `document ${d.id}`),
        vectors: docs[w]!.map((d) => d.vector),
      })
    const data = s.path('data')
    const both = await Promise.all(
      [0, 1].map((w) => collect(spawnTea(['run', s.path('writer.yaml'), '--data-dir', data, '-q', '-i', input(w)]))),
    )
    for (const r of both) assert.is(r.code, 0, r.stderr)

    const all = docs.flat()
    const query = Array.from({ length: DIM }, () => random() * 2 - 1)
    const reference = (keep: (id: string) => boolean) =>
      all
        .filter((d) => keep(d.id))
        .map((d) => ({ id: d.id, s: cosine(d.vector, query) }))
        .sort((x, y) => y.s - x.s)
        .slice(0, 10)
        .map((x) => x.id)
    const ask = async (filter: Record<string, unknown>) => {
      const r = await tea(['run', s.path('reader.yaml'), '--data-dir', data, '-q', '-i', JSON.stringify({ query, filter })])
      assert.is(r.code, 0, r.stderr)
      return JSON.parse(r.stdout).found.results as Array<{ id: string; metadata: { writer: string } }>
    }
    assert.equal(
      (await ask({})).map((h) => h.id),
      reference(() => true),
    )
    const onlyB = await ask({ writer: 'b' })
    assert.equal(
      onlyB.map((h) => h.id),
      reference((id) => id.startsWith('b')),
    )

    // Another dimension: a coded error, and the collection is as it was.
    const bad = JSON.stringify({ writer: 'c', ids: ['c0'], texts: ['x'], vectors: [[1, 2, 3]] })
    writeFileSync(
      s.path('bad.yaml'),
      writer()
        .replace(/put[1-4][\s\S]*$/, '')
        .replace(/\s+- name: $/, '\n'),
    )
    const refused = await tea(['run', s.path('bad.yaml'), '--data-dir', data, '-q', '-i', bad])
    assert.is(refused.code, 1, refused.stderr)
    assert.match(refused.stderr, /COLLECTION_MISMATCH/)
    assert.match(refused.stderr, /16-dimension vectors of test:model; these are 3-dimension/)
    assert.equal(
      (await ask({ writer: 'c' })).map((h) => h.id),
      [],
    )
  } finally {
    s.cleanup()
  }
})

const GREPPER = `name: grepper
nodes:
  - name: put
    uses: ltm.store
    with: { key: pump-room, value: "The key of the pump room is with Ana." }
    output: put
  - name: grep
    uses: memory.grep
    with: { pattern: "KEY OF", case_sensitive: false }
    output: found
`

test('tea run: memory.grep finds the line of an ltm entry in the default collection (tea.ltm)', async () => {
  const s = scratch()
  try {
    writeFileSync(s.path('grep.yaml'), GREPPER)
    const r = await tea(['run', s.path('grep.yaml'), '--data-dir', s.path('data'), '-q'])
    assert.is(r.code, 0, r.stderr)
    const found = JSON.parse(r.stdout).found
    assert.equal(found.matches, [
      { file_path: 'pump-room', content_type: null, line_number: 2, match_text: 'The key of the pump room is with Ana.' },
    ])
    assert.is(found.file_count, 1)
  } finally {
    s.cleanup()
  }
})

test.run()
