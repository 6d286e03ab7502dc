/**
 * What the collection table needs of one named database: records (msgpack in LMDB), raw bytes (float32 vectors),
 * ordered ranges, and a synchronous write transaction that commits all of its writes or none (a throw inside writes
 * nothing). lmdb-store.ts gives it over LMDB, memory-db.ts over Maps.
 *
 * Layout of a collection's database:
 *   ['m']                → {version, count, totalLength, model?, dim?}   the collection's header
 *   ['d', id]            → {text, metadata, value?, length}               one document (length: its words)
 *   ['v', id]            → float32 bytes, unit length                     its vector, when it has one
 *   ['t', term, id]      → [tf, length]                                   the inverted index: one posting
 * and of the `embeddings` database (the cache of embeddings by model and text):
 *   [model, sha256(text)] → float64 bytes, exactly as the model returned them (a re-run gets the same numbers)
 */

import type { Key } from '../kv.ts'

export interface CollectionWriter {
  put(key: Key, record: unknown): void
  putBytes(key: Key, bytes: Uint8Array): void
  remove(key: Key): void
}

export interface CollectionDb {
  get(key: Key): unknown
  getBytes(key: Key): Uint8Array | undefined
  /** Decoded records with start ≤ key < end. */
  range(start: Key, end: Key): Iterable<{ key: Key; value: unknown }>
  /** Raw bytes with start ≤ key < end. */
  rangeBytes(start: Key, end: Key): Iterable<{ key: Key; value: Uint8Array }>
  /** Runs `writes` in one synchronous transaction (its reads see its writes); a throw inside commits nothing. */
  write<T>(writes: (w: CollectionWriter) => T): T
}

export interface CollectionDbs {
  /** The database of a name; undefined when it does not exist and `create` is false. */
  open(name: string, create: boolean): CollectionDb | undefined
}
