/**
 * Collections: named sets of documents (text, metadata, an optional value and an optional vector), each in a
 * database of its own (db.ts gives the layout), searched by vector (exact cosine, vectors.ts) or by words (BM25 over
 * an inverted index kept beside the documents, bm25.ts). A collection remembers the embedding model and dimension of
 * its first vectors and refuses others (COLLECTION_MISMATCH naming both). Every write is one transaction: a batch
 * with one bad document writes nothing.
 *
 * Searching by vector scans a Matrix of all of a collection's vectors. The matrix is built on the first query and
 * kept per process with the collection's version (bumped by every write, from any process): a query reads the
 * header, and only rebuilds when another write came in since.
 */

import { createHash, randomUUID } from 'node:crypto'
import { TeaError } from '../../core/errors.ts'
import { isPlainObject } from '../../core/util.ts'
import { MAX_STRING } from '../kv.ts'
import { bm25Term, termCounts, tokenize } from './bm25.ts'
import type { CollectionDb, CollectionDbs, CollectionWriter } from './db.ts'
import { compileFilter, type Metadata, type MetadataFilter } from './filter.ts'
import { nearest, normalise, type Matrix } from './vectors.ts'

export type { MetadataFilter } from './filter.ts'

export const LIMITS = {
  /** Characters of one document's text. */
  textChars: 256 * 1024,
  /** Characters of one document's metadata as JSON (its value may take textChars). */
  metadataChars: 16 * 1024,
  /** Documents in one write. */
  batch: 10_000,
  dimensions: 8192,
  k: 1000,
  idChars: 256,
} as const

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/

export interface DocumentInput {
  /** Default: a new UUID. Writing an id that exists replaces that document. */
  id?: string
  text: string
  metadata?: Metadata
  /** Anything kept with the document and returned with it (ltm's values). */
  value?: unknown
  vector?: ArrayLike<number>
}

export interface StoredDocument {
  id: string
  text: string
  metadata: Metadata
  value?: unknown
  updatedAt: number
}

export interface Hit extends StoredDocument {
  score: number
}

export interface CollectionInfo {
  name: string
  count: number
  model?: string
  dim?: number
}

interface Header {
  version: number
  count: number
  totalLength: number
  model?: string
  dim?: number
}

/** A collection's vectors as this process last read them, and their metadata once a filter asked for it. */
interface Built {
  version: number
  matrix: Matrix
  metadata?: Metadata[]
}

interface DocRecord {
  text: string
  metadata: Metadata
  value?: unknown
  length: number
  updatedAt: number
}

export interface CollectionTable {
  collectionPut(name: string, docs: DocumentInput[], model?: string): Promise<{ ids: string[]; created: number }>
  collectionGet(name: string, ids: string[]): Promise<Array<StoredDocument | null>>
  collectionDelete(name: string, ids: string[]): Promise<number>
  collectionQuery(name: string, vector: ArrayLike<number>, k: number, filter?: MetadataFilter, model?: string): Promise<Hit[]>
  collectionSearch(name: string, query: string, k: number, filter?: MetadataFilter): Promise<Hit[]>
  collectionList(name: string, k: number, filter?: MetadataFilter): Promise<Hit[]>
  /** Up to `n` documents in id order, those after the id `after` (memory.grep reads a collection page by page). */
  collectionPage(name: string, after: string | undefined, n: number): Promise<StoredDocument[]>
  collectionInfo(name: string): Promise<CollectionInfo | undefined>
  embeddingCacheGet(model: string, texts: string[]): Promise<Array<number[] | null>>
  embeddingCachePut(model: string, texts: string[], vectors: number[][]): Promise<void>
}

/** The database holding the embedding cache; collections' databases are `c:<name>`. */
const EMBEDDINGS = 'embeddings'

export function createCollectionTable(dbs: CollectionDbs, now: () => number): CollectionTable {
  const matrices = new Map<string, Built>()

  function existing(name: string): CollectionDb {
    checkName(name)
    const db = dbs.open(`c:${name}`, false)
    if (!db || db.get(['m']) === undefined) {
      throw new TeaError('COLLECTION_NOT_FOUND', `no collection named ${JSON.stringify(name)}: nothing was stored in it`, {
        details: { collection: name },
        hint: 'store documents first (vector.store, ltm.store), or check the collection name',
      })
    }
    return db
  }

  function matrixOf(name: string, db: CollectionDb, header: Header) {
    const cached = matrices.get(name)
    if (cached && cached.version === header.version) return cached
    const dim = header.dim ?? 0
    const ids: string[] = []
    // header.count bounds the vectors (documents without one count too); each row is copied as it is read, as
    // lmdb may reuse the buffer of a range's value.
    let rows = new Float32Array(header.count * dim)
    const bytes = new Uint8Array(rows.buffer)
    for (const { key, value } of db.rangeBytes(['v'], ['v', MAX_STRING])) {
      if (ids.length === header.count || value.length !== dim * 4) break
      bytes.set(value, ids.length * dim * 4)
      ids.push((key as string[])[1]!)
    }
    rows = rows.subarray(0, ids.length * dim)
    const built: Built = { version: header.version, matrix: { dim, ids, rows } }
    matrices.set(name, built)
    return built
  }

  /** The metadata of every row, read at the first filtered query of a version (an unfiltered one never needs it). */
  function metadataOf(db: CollectionDb, built: Built): Metadata[] {
    built.metadata ??= built.matrix.ids.map((id) => ((db.get(['d', id]) as DocRecord | undefined)?.metadata ?? {}) as Metadata)
    return built.metadata
  }

  /** The document of a hit; undefined when another process deleted it since the matrix was read. */
  function hit(db: CollectionDb, id: string, score: number): Hit | undefined {
    const doc = db.get(['d', id]) as DocRecord | undefined
    return doc && { ...stored(id, doc), score }
  }

  return {
    async collectionPut(name, docs, model) {
      checkName(name)
      if (docs.length === 0) return { ids: [], created: 0 }
      if (docs.length > LIMITS.batch) throw invalid(`${docs.length} documents in one write; at most ${LIMITS.batch}`)
      const prepared = docs.map((d, i) => prepare(d, i))
      const withVectors = prepared.filter((d) => d.vector)
      const dim = withVectors[0]?.vector?.length
      if (withVectors.length && model === undefined) throw invalid('vectors need the name of the model that made them')
      const at = now()
      const db = dbs.open(`c:${name}`, true)!
      return db.write((w) => {
        const header: Header = (db.get(['m']) as Header | undefined) ?? { version: 0, count: 0, totalLength: 0 }
        if (dim !== undefined) {
          if (header.dim !== undefined && (header.dim !== dim || header.model !== model)) {
            throw new TeaError(
              'COLLECTION_MISMATCH',
              `collection ${JSON.stringify(name)} holds ${header.dim}-dimension vectors of ${header.model}; these are ${dim}-dimension vectors of ${model}`,
              {
                details: { collection: name, model: header.model, dim: header.dim, got: { model, dim } },
                hint: 'embed with the model the collection was made with, or store into another collection',
              },
            )
          }
          header.dim = dim
          header.model = model
        }
        let created = 0
        for (const [i, d] of prepared.entries()) {
          const vector = d.vector && normalise(d.vector, dim!, `document ${i}'s vector`)
          if (removeDoc(db, w, d.id, header)) created--
          created++
          const words = tokenize(d.text)
          const record: DocRecord = { text: d.text, metadata: d.metadata, length: words.length, updatedAt: at }
          if (d.value !== undefined) record.value = d.value
          w.put(['d', d.id], record)
          for (const [term, tf] of termCounts(words)) w.put(['t', term, d.id], [tf, words.length])
          if (vector) w.putBytes(['v', d.id], new Uint8Array(vector.buffer))
          header.count++
          header.totalLength += words.length
        }
        header.version++
        w.put(['m'], header)
        return { ids: prepared.map((d) => d.id), created }
      })
    },

    async collectionGet(name, ids) {
      const db = existing(name)
      return ids.map((id) => {
        const doc = db.get(['d', id]) as DocRecord | undefined
        return doc ? stored(id, doc) : null
      })
    },

    async collectionDelete(name, ids) {
      const db = existing(name)
      return db.write((w) => {
        const header = db.get(['m']) as Header
        const deleted = ids.filter((id) => removeDoc(db, w, id, header)).length
        header.version++
        w.put(['m'], header)
        return deleted
      })
    },

    async collectionQuery(name, vector, k, filter, model) {
      checkK(k)
      const keep = compileFilter(filter)
      const db = existing(name)
      const header = db.get(['m']) as Header
      if (header.dim === undefined) return []
      if (model !== undefined && model !== header.model) {
        throw new TeaError(
          'COLLECTION_MISMATCH',
          `collection ${JSON.stringify(name)} holds vectors of ${header.model} (${header.dim} dimensions); the query was embedded with ${model}`,
          {
            details: { collection: name, model: header.model, dim: header.dim, got: { model } },
            hint: 'query with the model the collection was made with',
          },
        )
      }
      const query = normalise(vector, header.dim, 'the query vector')
      const built = matrixOf(name, db, header)
      const metadata = keep && metadataOf(db, built)
      const best = nearest(built.matrix, query, k, keep && ((row) => keep(metadata![row]!)))
      return best.flatMap((b) => hit(db, built.matrix.ids[b.index]!, b.score) ?? [])
    },

    async collectionSearch(name, query, k, filter) {
      checkK(k)
      const keep = compileFilter(filter)
      const db = existing(name)
      const header = db.get(['m']) as Header
      const terms = [...new Set(tokenize(query))].slice(0, 64)
      const scores = new Map<string, number>()
      const avg = header.count ? header.totalLength / header.count : 0
      for (const term of terms) {
        const postings = [...db.range(['t', term], ['t', term, MAX_STRING])]
        for (const { key, value } of postings) {
          const id = (key as string[])[2]!
          const [tf, length] = value as [number, number]
          scores.set(id, (scores.get(id) ?? 0) + bm25Term(tf, length, postings.length, header.count, avg))
        }
      }
      const ranked = [...scores].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      const hits: Hit[] = []
      for (const [id, score] of ranked) {
        if (hits.length === k) break
        const h = hit(db, id, score)
        if (h && (!keep || keep(h.metadata))) hits.push(h)
      }
      return hits
    },

    async collectionList(name, k, filter) {
      checkK(k)
      const keep = compileFilter(filter)
      const db = dbs.open(`c:${(checkName(name), name)}`, false)
      if (!db) return []
      const hits: Hit[] = []
      for (const { key, value } of db.range(['d'], ['d', MAX_STRING])) {
        const doc = value as DocRecord
        if (!keep || keep(doc.metadata)) hits.push({ ...stored((key as string[])[1]!, doc), score: 0 })
      }
      return hits.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : 1)).slice(0, k)
    },

    async collectionPage(name, after, n) {
      checkK(n)
      const db = existing(name)
      const docs: StoredDocument[] = []
      for (const { key, value } of db.range(after === undefined ? ['d'] : ['d', after], ['d', MAX_STRING])) {
        const id = (key as string[])[1]!
        if (id === after) continue
        docs.push(stored(id, value as DocRecord))
        if (docs.length === n) break
      }
      return docs
    },

    async collectionInfo(name) {
      checkName(name)
      const header = dbs.open(`c:${name}`, false)?.get(['m']) as Header | undefined
      if (!header) return undefined
      return { name, count: header.count, ...(header.model !== undefined && { model: header.model, dim: header.dim }) }
    },

    async embeddingCacheGet(model, texts) {
      const db = dbs.open(EMBEDDINGS, false)
      return texts.map((t) => {
        const bytes = db?.getBytes([model.slice(0, 200), digest(t)])
        return bytes ? Array.from(new Float64Array(bytes.slice().buffer)) : null
      })
    },

    async embeddingCachePut(model, texts, vectors) {
      if (texts.length > LIMITS.batch) throw invalid(`${texts.length} embeddings in one write; at most ${LIMITS.batch}`)
      const rows = texts.map((t, i) => {
        const v = vectors[i] ?? []
        if (v.length === 0 || v.length > LIMITS.dimensions || !v.every(Number.isFinite)) {
          throw invalid(`the model returned an unusable vector for text ${i} (${v.length} values)`)
        }
        return { key: [model.slice(0, 200), digest(t)], bytes: new Uint8Array(Float64Array.from(v).buffer) }
      })
      const db = dbs.open(EMBEDDINGS, true)!
      db.write((w) => {
        for (const r of rows) w.putBytes(r.key, r.bytes)
      })
    },
  }
}

interface Prepared {
  id: string
  text: string
  metadata: Metadata
  value?: unknown
  vector?: ArrayLike<number>
}

/** A document checked before its transaction: everything that can be refused without reading the store. */
function prepare(d: DocumentInput, i: number): Prepared {
  if (!isPlainObject(d)) throw invalid(`document ${i} is not a mapping`)
  const id = d.id ?? randomUUID()
  if (typeof id !== 'string' || id.length === 0 || id.length > LIMITS.idChars) {
    throw invalid(`document ${i}'s id must be a string of 1 to ${LIMITS.idChars} characters`)
  }
  if (typeof d.text !== 'string' || d.text.trim() === '') throw invalid(`document ${i} (${JSON.stringify(id)}) has an empty text`)
  if (d.text.length > LIMITS.textChars) {
    throw invalid(
      `document ${i} (${JSON.stringify(id)}) has ${d.text.length} characters; at most ${LIMITS.textChars}`,
      'split it first (text.chunk)',
    )
  }
  const metadata = d.metadata ?? {}
  if (!isPlainObject(metadata)) throw invalid(`document ${i}'s metadata must be a mapping`)
  const size = JSON.stringify(metadata).length
  if (size > LIMITS.metadataChars)
    throw invalid(`document ${i}'s metadata takes ${size} characters as JSON; at most ${LIMITS.metadataChars}`)
  const valueSize = d.value === undefined ? 0 : (JSON.stringify(d.value) ?? '').length
  if (valueSize > LIMITS.textChars)
    throw invalid(`document ${i}'s value takes ${valueSize} characters as JSON; at most ${LIMITS.textChars}`)
  if (d.vector !== undefined && (d.vector.length === 0 || d.vector.length > LIMITS.dimensions)) {
    throw invalid(`document ${i}'s vector has ${d.vector.length} dimensions; 1 to ${LIMITS.dimensions}`)
  }
  return { id, text: d.text, metadata, ...(d.value !== undefined && { value: d.value }), ...(d.vector && { vector: d.vector }) }
}

/** Removes a document, its postings and its vector inside a write; whether it was there. */
function removeDoc(db: CollectionDb, w: CollectionWriter, id: string, header: Header): boolean {
  const old = db.get(['d', id]) as DocRecord | undefined
  if (!old) return false
  for (const term of termCounts(tokenize(old.text)).keys()) w.remove(['t', term, id])
  w.remove(['d', id])
  w.remove(['v', id])
  header.count--
  header.totalLength -= old.length
  return true
}

function stored(id: string, doc: DocRecord): StoredDocument {
  return { id, text: doc.text, metadata: doc.metadata, ...(doc.value !== undefined && { value: doc.value }), updatedAt: doc.updatedAt }
}

function checkName(name: string): void {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new TeaError('DOCUMENT_INVALID', `collection name ${JSON.stringify(String(name).slice(0, 80))} is not allowed`, {
      hint: 'a collection name is 1 to 64 letters, digits, _, . or -, starting with a letter or digit',
    })
  }
}

function checkK(k: number): void {
  if (!Number.isInteger(k) || k < 1 || k > LIMITS.k) throw invalid(`k must be a whole number from 1 to ${LIMITS.k}; got ${k}`)
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

function invalid(message: string, hint?: string): TeaError {
  return new TeaError('DOCUMENT_INVALID', message, hint ? { hint } : {})
}
