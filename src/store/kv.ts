/**
 * The slice of one LMDB named database that the store's modules use, so that only lmdb-store.ts imports `lmdb`
 * (SPEC §2: one package, one module). Keys are lmdb's ordered keys (strings, numbers, arrays of them); values are
 * the msgpackr bytes of a record, encoded with the database's shared structures.
 */

export type Key = string | number | Array<string | number>

export interface KvEntry {
  key: Key
  value: Uint8Array
}

export interface Kv {
  /** The committed bytes at `key` (reads never see writes still queued). */
  get(key: Key): Uint8Array | undefined
  /**
   * Runs `writes` (which queues puts and removes, in any database of the store) as a block that commits only if
   * `key` has no entry when its transaction runs; resolves with whether it did, once committed.
   */
  ifAbsent(key: Key, writes: () => void): Promise<boolean>
  /** Queues a write into the next batched transaction; resolves once it has committed. */
  put(key: Key, bytes: Uint8Array, options?: { noOverwrite?: boolean }): Promise<boolean>
  remove(key: Key): Promise<boolean>
  /** Committed entries with start ≤ key < end (start > key ≥ end when reverse). */
  range(start: Key, end: Key, reverse?: boolean): Iterable<KvEntry>
  keys(start: Key, end: Key): Iterable<Key>
  /** msgpackr with this database's shared structures. The bytes stay valid after later encodes. */
  encode(value: unknown): Uint8Array
  /** Throws on truncated or malformed bytes. */
  decode(bytes: Uint8Array): unknown
  /**
   * Adds 1 to the counter at `key` (a 4-byte record, absent = 0) and returns the new value, in a synchronous
   * transaction of its own: atomic across threads and processes. For rare allocations only (it blocks for a commit).
   */
  increment(key: Key): number
  /**
   * Reads the committed bytes at `key`, passes them to `update` and writes what it returns, in one synchronous
   * transaction: atomic across threads and processes. `update` may throw to write nothing.
   */
  update(key: Key, update: (current: Uint8Array | undefined) => Uint8Array): void
  /** Bytes of a key as stored. */
  keyBytes(key: Key): number
}

/** The highest string element for range ends: every subtask or memory key sorts below it. */
export const MAX_STRING = '\u{10ffff}'
