/**
 * Memory a board can hold (issue 33): exact vector search and BM25 in tea's store, beside a naive JavaScript loop
 * and (when it loads) usearch's HNSW index, in one process, one run.
 * Run: npx tsx bench/vector.bench.ts [--queries N] [--big N]     (results: bench/RESULTS.md, "Memory a board can hold")
 *
 * - 10,000 × 384 float32 vectors (seeded uniform noise) with a 30-word text and {n, group} metadata each, written
 *   through the LMDB store in batches of 1,000 (each batch one fsynced transaction, postings included); bytes on
 *   disk are the tea.lmdb file's allocated blocks; peak RSS is the process's, read after tea's phase (before the
 *   others allocate) and at the end.
 * - query latency: N queries (k 10) after one cold query (the cold one builds the in-process matrix and is given
 *   apart); p50 and p99. The naive loop keeps number[][] and computes the full cosine (norms included) for every
 *   vector, then sorts all scores. Top-10 agreement with tea's exact search is checked for every query.
 * - usearch (if it loads): HNSW, cosine, connectivity 16, expansion_add 128, expansion_search 256; build time,
 *   query p50/p99 and recall@10 against the exact top 10.
 * - 100,000 × 384 (`--big`, default 100000): write, cold build and query p50 of tea's search.
 * - BM25: N two-word queries over the 10,000 texts through the inverted index, beside a naive loop that scores
 *   every pre-tokenised document per query (same formula); top-10 agreement checked.
 */

import { statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { openLmdbStore } from '../src/store/lmdb-store.ts'
import { bm25Term, termCounts, tokenize } from '../src/store/collections/bm25.ts'
import type { Store } from '../src/store/types.ts'
import { rng } from '../test/support/rng.ts'
import { tempDir } from '../test/support/temp-dir.ts'

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name)
  return i > 0 ? Number(process.argv[i + 1]) : fallback
}
const QUERIES = arg('--queries', 200)
const BIG = arg('--big', 100_000)
const N = 10_000
const DIM = 384
const K = 10

const random = rng(20261202)
const VOCAB = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}`)
/** Zipf-like word choice, so some words are common and most are rare, as in notes. */
const word = () => VOCAB[Math.floor(VOCAB.length * random() ** 3)]!
const text = () => Array.from({ length: 30 }, word).join(' ')
const vector = () => Float32Array.from({ length: DIM }, () => random() * 2 - 1)

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!
const f2 = (x: number) => x.toFixed(2)
const rssMb = () => (process.resourceUsage().maxRSS / 1024).toFixed(0)
const diskBytes = (dir: string) => statSync(join(dir, 'tea.lmdb')).blocks * 512

async function write(store: Store, name: string, vectors: Float32Array[], texts: string[], batch: number): Promise<number> {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < vectors.length; i += batch) {
    const docs = vectors.slice(i, i + batch).map((v, j) => ({
      id: `d${i + j}`,
      text: texts[i + j]!,
      vector: v,
      metadata: { n: i + j, group: (i + j) % 10 },
    }))
    await store.collectionPut(name, docs, 'bench:random-384')
  }
  return ms(t0)
}

async function main(): Promise<void> {
  console.log(
    `vector bench: ${N} × ${DIM}, ${QUERIES} queries, k ${K}; load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; node ${process.version}`,
  )
  console.log(`peak RSS at start: ${rssMb()} MB`)
  const vectors = Array.from({ length: N }, vector)
  const texts = Array.from({ length: N }, text)
  const queries = Array.from({ length: QUERIES }, vector)

  // --- tea ---
  const dir = tempDir('tea-vector-bench-')
  const store = openLmdbStore(dir)
  const writeMs = await write(store, 'bench', vectors, texts, 1000)
  let t0 = process.hrtime.bigint()
  const cold = await store.collectionQuery('bench', queries[0]!, K)
  const coldMs = ms(t0)
  const teaTimes: number[] = []
  const teaTop: string[][] = []
  for (const q of queries) {
    t0 = process.hrtime.bigint()
    const hits = await store.collectionQuery('bench', q, K)
    teaTimes.push(ms(t0))
    teaTop.push(hits.map((h) => h.id))
  }
  const filtered: number[] = []
  for (const q of queries) {
    t0 = process.hrtime.bigint()
    await store.collectionQuery('bench', q, K, { group: 3 })
    filtered.push(ms(t0))
  }
  await store.flush()
  console.log(
    `tea: write ${N} in batches of 1000: ${writeMs.toFixed(0)} ms (${((writeMs * 1000) / N).toFixed(0)} µs/doc); bytes on disk ${diskBytes(dir)} (${(diskBytes(dir) / N).toFixed(0)} B/doc)`,
  )
  console.log(
    `tea: cold query (builds the matrix) ${f2(coldMs)} ms; query p50 ${f2(pct(teaTimes, 0.5))} ms, p99 ${f2(pct(teaTimes, 0.99))} ms; with filter group=3 (1/10 kept) p50 ${f2(pct(filtered, 0.5))} ms`,
  )
  console.log(`peak RSS after tea's phase: ${rssMb()} MB`)
  void cold

  // --- naive loop ---
  const plain = vectors.map((v) => Array.from(v))
  const naiveTimes: number[] = []
  let agree = 0
  queries.forEach((qv, qi) => {
    const q = Array.from(qv)
    t0 = process.hrtime.bigint()
    const scored: Array<{ i: number; s: number }> = []
    for (let i = 0; i < plain.length; i++) {
      const v = plain[i]!
      let dot = 0
      let nv = 0
      let nq = 0
      for (let j = 0; j < DIM; j++) {
        dot += v[j]! * q[j]!
        nv += v[j]! * v[j]!
        nq += q[j]! * q[j]!
      }
      scored.push({ i, s: dot / Math.sqrt(nv * nq) })
    }
    scored.sort((a, b) => b.s - a.s)
    const top = scored.slice(0, K).map((x) => `d${x.i}`)
    naiveTimes.push(ms(t0))
    if (top.join() === teaTop[qi]!.join()) agree++
  })
  console.log(
    `naive JS loop: query p50 ${f2(pct(naiveTimes, 0.5))} ms, p99 ${f2(pct(naiveTimes, 0.99))} ms; top ${K} identical to tea's for ${agree}/${QUERIES} queries`,
  )

  // --- usearch ---
  try {
    const usearch = createRequire(import.meta.url)('usearch') as {
      Index: new (
        o: Record<string, unknown>,
      ) => {
        add(keys: bigint | BigUint64Array, v: Float32Array): void
        search(v: Float32Array, k: number): { keys: BigUint64Array }
      }
    }
    const index = new usearch.Index({ metric: 'cos', connectivity: 16, dimensions: DIM, expansion_add: 128, expansion_search: 256 })
    t0 = process.hrtime.bigint()
    vectors.forEach((v, i) => index.add(BigInt(i), v))
    const buildMs = ms(t0)
    const times: number[] = []
    let found = 0
    queries.forEach((q, qi) => {
      t0 = process.hrtime.bigint()
      const r = index.search(q, K)
      times.push(ms(t0))
      const exact = new Set(teaTop[qi])
      for (const key of r.keys) if (exact.has(`d${key}`)) found++
    })
    console.log(
      `usearch 2.26.2 HNSW: build ${buildMs.toFixed(0)} ms; query p50 ${f2(pct(times, 0.5))} ms, p99 ${f2(pct(times, 0.99))} ms; recall@${K} ${(found / (K * QUERIES)).toFixed(3)}`,
    )
  } catch (e) {
    console.log(`usearch: does not load here (${e instanceof Error ? e.message : String(e)})`)
  }

  // --- BM25 ---
  const wordQueries = Array.from({ length: QUERIES }, () => `${VOCAB[Math.floor(random() * 400)]} ${VOCAB[Math.floor(random() * 1500)]}`)
  const bmTimes: number[] = []
  const bmTop: string[][] = []
  for (const q of wordQueries) {
    t0 = process.hrtime.bigint()
    const hits = await store.collectionSearch('bench', q, K)
    bmTimes.push(ms(t0))
    bmTop.push(hits.map((h) => h.id))
  }
  const docs = texts.map((t) => tokenize(t))
  const avg = docs.reduce((s, d) => s + d.length, 0) / docs.length
  const naiveBm: number[] = []
  let bmAgree = 0
  wordQueries.forEach((q, qi) => {
    t0 = process.hrtime.bigint()
    const terms = [...new Set(tokenize(q))]
    const df = terms.map((term) => docs.filter((d) => d.includes(term)).length)
    const scored: Array<{ i: number; s: number }> = []
    docs.forEach((d, i) => {
      const tf = termCounts(d)
      let s = 0
      terms.forEach((term, ti) => {
        const n = tf.get(term)
        if (n) s += bm25Term(n, d.length, df[ti]!, docs.length, avg)
      })
      if (s > 0) scored.push({ i, s })
    })
    scored.sort((a, b) => b.s - a.s || (`d${a.i}` < `d${b.i}` ? -1 : 1))
    naiveBm.push(ms(t0))
    if (
      scored
        .slice(0, K)
        .map((x) => `d${x.i}`)
        .join() === bmTop[qi]!.join()
    )
      bmAgree++
  })
  console.log(
    `BM25 over ${N} documents: tea p50 ${f2(pct(bmTimes, 0.5))} ms, p99 ${f2(pct(bmTimes, 0.99))} ms; naive loop p50 ${f2(pct(naiveBm, 0.5))} ms, p99 ${f2(pct(naiveBm, 0.99))} ms; top ${K} identical for ${bmAgree}/${QUERIES}`,
  )
  await store.close()

  // --- 100,000 ---
  if (BIG > 0) {
    const bigDir = tempDir('tea-vector-bench-big-')
    const big = openLmdbStore(bigDir)
    const bigVectors = Array.from({ length: BIG }, vector)
    const shortTexts = Array.from({ length: BIG }, (_, i) => `doc ${i}`)
    const bigWrite = await write(big, 'big', bigVectors, shortTexts, 5000)
    t0 = process.hrtime.bigint()
    await big.collectionQuery('big', queries[0]!, K)
    const bigCold = ms(t0)
    const times: number[] = []
    for (const q of queries.slice(0, 50)) {
      t0 = process.hrtime.bigint()
      await big.collectionQuery('big', q, K)
      times.push(ms(t0))
    }
    await big.flush()
    console.log(
      `tea ${BIG} × ${DIM}: write ${(bigWrite / 1000).toFixed(1)} s; cold query ${bigCold.toFixed(0)} ms; query p50 ${f2(pct(times, 0.5))} ms, p99 ${f2(pct(times, 0.99))} ms (50 queries); bytes on disk ${diskBytes(bigDir)}`,
    )
    await big.close()
  }
  console.log(
    `peak RSS at the end: ${rssMb()} MB; load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  )
}

await main()
