/**
 * The store on disk: one LMDB environment at `<dataDir>/tea.lmdb` (a file, with `tea.lmdb-lock` beside it) holding
 * four named databases, `runs`, `checkpoints`, `plans` and `memory` (layouts in run-table.ts, lmdb-checkpoints.ts,
 * plan-table.ts and memory-table.ts), plus one per collection (`c:<name>`) and the embedding cache (`embeddings`),
 * opened at their first use (collections/db.ts). Values are msgpackr records with shared structures: the property names of each record
 * shape are stored once per database (under a symbol key) instead of in every record, which roughly halves a
 * record's bytes. This is the only module that imports `lmdb` (SPEC §2).
 *
 * Several stores may be open on one path in one process (worker threads open their own): LMDB shares the
 * environment, and each sees what the others committed.
 */

import { accessSync, closeSync, constants, fstatSync, mkdirSync, openSync, readSync } from 'node:fs'
import { join } from 'node:path'
import * as lmdb from 'lmdb'
import { open, type Database, type RootDatabase } from 'lmdb'
import { TeaError, isTeaError } from '../core/errors.ts'
import { once } from '../core/util.ts'
import { createCollectionTable } from './collections/index.ts'
import type { CollectionDb, CollectionDbs } from './collections/db.ts'
import { checkRoomToOpen, diskFull, quietLmdbCommitErrors, storeFull } from './full-disk.ts'
import type { Key, Kv } from './kv.ts'
import { createCheckpointLog } from './lmdb-checkpoints.ts'
import { createMemoryTable } from './memory-table.ts'
import { escapeProtoKeys, restoreProtoKeys } from './proto-keys.ts'
import { createPlanTable } from './plan-table.ts'
import { createRunTable } from './run-table.ts'
import type { Store, StoreOptions } from './types.ts'

const STRUCTURES = Symbol.for('tea.structures')
const DB_NAMES = ['runs', 'checkpoints', 'plans', 'memory'] as const
type DbName = (typeof DB_NAMES)[number]
/** Opened at their first use (kvOf): `runs` and `checkpoints` are written together in one `ifAbsent` block. */
const LAZY_DBS: ReadonlySet<DbName> = new Set(['plans', 'memory'])

/**
 * Durability. Every commit is fsynced (never `noSync`: on a power cut LMDB could then lose or corrupt committed
 * pages, and SD cards lose power often). `noMetaSync` skips the second fsync per commit (of the meta page): LMDB
 * keeps the database consistent and a power cut can at most undo the *last* commit, whose node is then run again
 * on resume, as in-flight work is anyway (SPEC §3.6: at-least-once for in-flight work). A killed process loses
 * nothing that committed. Measured on an idle dev VM: ~260 µs per awaited commit instead of ~410 µs.
 * `overlappingSync` (lmdb-js's default on Linux) is off: with it each awaited commit took longer (~470 µs), because
 * the next commit waits for the previous flush. Figures and the other options tried: bench/store.results.md.
 * Batching is lmdb-js's event-turn batching: every write queued in one turn (parallel subtasks, a snapshot with its
 * retention deletes) commits in one transaction with one fsync.
 */
const ENV_OPTIONS = { overlappingSync: false, noMetaSync: true, compression: false, maxDbs: 128 } as const

/** Collections a store may hold (each is a named database: `maxDbs` bounds them all). */
const MAX_COLLECTIONS = 100

export interface LmdbStoreOptions extends StoreOptions {}

export function openLmdbStore(dataDir: string, options: LmdbStoreOptions = {}): Store {
  guardCommitFailures()
  quietLmdbCommitErrors()
  const env = openEnv(dataDir)
  const kvs = Object.fromEntries(DB_NAMES.map((name) => [name, kvOf(env, name, LAZY_DBS.has(name))])) as Record<DbName, Kv>
  const log = createCheckpointLog(kvs.checkpoints, options.keepSnapshots)
  const runs = createRunTable(kvs.runs)
  const plans = createPlanTable(kvs.plans)
  const memory = createMemoryTable(kvs.memory, options.now ?? Date.now)
  const collections = createCollectionTable(collectionDbs(env, dataDir), options.now ?? Date.now)
  let closed: Promise<void> | undefined

  /** Runs `fn` with errors mapped to TeaErrors; a closed store refuses. */
  async function guard<T>(what: string, fn: () => T | Promise<T>): Promise<T> {
    if (closed) throw new TeaError('STORE_ERROR', `${what} on a closed store (${dataDir})`)
    try {
      return await fn()
    } catch (e) {
      throw wrapStoreError(`${what} in ${dataDir}`, e, dataDir)
    }
  }

  return {
    createRun: (run, first) =>
      guard(`createRun ${run.id}`, async () => {
        if (!first) return runs.createRun(run)
        let snapshot: Promise<void> | undefined
        const writeSnapshot = log.prepareSnapshot(run.id, first, undefined)
        try {
          await runs.createRun(run, () => void (snapshot = writeSnapshot()))
        } catch (e) {
          log.forget(run.id) // its figures counted a snapshot that was not written
          throw e
        } finally {
          await snapshot
        }
      }),
    getRun: (id) => guard(`getRun ${id}`, () => runs.getRun(id)),
    updateRun: (id, patch) => guard(`updateRun ${id}`, () => runs.updateRun(id, patch)),
    listRuns: () => guard('listRuns', () => runs.listRuns()),
    claimRun: (id, take) => guard(`claimRun ${id}`, () => runs.claimRun(id, take)),
    deleteRun: (id) =>
      guard(`deleteRun ${id}`, async () => {
        await Promise.all([runs.remove(id), log.drop(id), plans.removeRun(id)])
      }),

    appendStep: (runId, entry) => guard(`checkpoint of run ${runId}`, () => log.append(runId, entry)),
    snapshot: (runId, entry, keep) => guard(`snapshot of run ${runId}`, () => log.snapshot(runId, entry, keep)),
    loadLatest: (runId) => guard(`loading the checkpoint of run ${runId}`, () => log.loadLatest(runId)),
    checkpointBytes: (runId) => guard(`checkpointBytes ${runId}`, () => log.bytes(runId)),
    checkpointStats(runId) {
      if (closed) throw new TeaError('STORE_ERROR', `checkpointStats ${runId} on a closed store (${dataDir})`)
      try {
        return log.stats(runId)
      } catch (e) {
        throw wrapStoreError(`checkpointStats ${runId} in ${dataDir}`, e, dataDir)
      }
    },

    putPlanHeader: (runId, planId, header) => guard(`plan ${planId} of run ${runId}`, () => plans.putPlanHeader(runId, planId, header)),
    putSubtask: (runId, planId, subtaskId, record) =>
      guard(`subtask ${subtaskId} of plan ${planId}`, () => plans.putSubtask(runId, planId, subtaskId, record)),
    getPlan: (runId, planId) => guard(`plan ${planId} of run ${runId}`, () => plans.getPlan(runId, planId)),

    memoryPut: (ns, key, value, ttlMs) => guard(`memory put ${ns}/${key}`, () => memory.memoryPut(ns, key, value, ttlMs)),
    memoryGet: (ns, key) => guard(`memory get ${ns}/${key}`, () => memory.memoryGet(ns, key)),
    memoryDelete: (ns, key) => guard(`memory delete ${ns}/${key}`, () => memory.memoryDelete(ns, key)),
    memoryList: (ns, prefix) => guard(`memory list ${ns}`, () => memory.memoryList(ns, prefix)),

    collectionPut: (name, docs, model) => guard(`writing to collection ${name}`, () => collections.collectionPut(name, docs, model)),
    collectionGet: (name, ids) => guard(`reading collection ${name}`, () => collections.collectionGet(name, ids)),
    collectionDelete: (name, ids) => guard(`deleting from collection ${name}`, () => collections.collectionDelete(name, ids)),
    collectionQuery: (name, vector, k, filter, model) =>
      guard(`querying collection ${name}`, () => collections.collectionQuery(name, vector, k, filter, model)),
    collectionSearch: (name, query, k, filter) =>
      guard(`searching collection ${name}`, () => collections.collectionSearch(name, query, k, filter)),
    collectionList: (name, k, filter) => guard(`listing collection ${name}`, () => collections.collectionList(name, k, filter)),
    collectionPage: (name, after, n) => guard(`reading collection ${name}`, () => collections.collectionPage(name, after, n)),
    collectionInfo: (name) => guard(`reading collection ${name}`, () => collections.collectionInfo(name)),
    embeddingCacheGet: (model, texts) => guard('reading the embedding cache', () => collections.embeddingCacheGet(model, texts)),
    embeddingCachePut: (model, texts, vectors) =>
      guard('writing the embedding cache', () => collections.embeddingCachePut(model, texts, vectors)),

    flush: () => guard('flush', async () => void (await env.flushed)),
    close() {
      closed ??= (async () => {
        await env.flushed
        await env.close()
      })()
      return closed
    },
  }
}

function openEnv(dataDir: string): RootDatabase {
  const path = join(dataDir, 'tea.lmdb')
  try {
    mkdirSync(dataDir, { recursive: true })
    accessSync(dataDir, constants.W_OK)
  } catch (e) {
    const code = (e as { code?: unknown }).code
    throw code === 'ENOSPC' || code === 'EDQUOT' ? storeFull(dataDir, e) : notWritable(dataDir, e)
  }
  checkMagic(path)
  checkRoomToOpen(dataDir, path)
  try {
    return open({ path, ...ENV_OPTIONS })
  } catch (e) {
    if (isTeaError(e)) throw e // e.g. CACHE_DIR_UNUSABLE from the native-addon loader, with its own hint
    const code = (e as { code?: string }).code
    if (code === 'EACCES' || code === 'EROFS' || code === 'EPERM' || /permission denied|read-only/i.test(String(e))) {
      throw notWritable(dataDir, e)
    }
    throw new TeaError('STORE_ERROR', `cannot open the store ${path}: ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
      hint: 'if the file is damaged, move it away and start again (runs and memory in it are lost)',
    })
  }
}

/**
 * LMDB trusts its file: opening something else (a copied-over file, a truncated download), or its own file with a
 * damaged meta page, crashed the process (SIGSEGV, SIGBUS) in testing. So an existing, non-empty tea.lmdb is read
 * before it is mapped: both meta pages (LMDB's magic 0xBEEFC0DE after the page header — byte 24 on 64-bit builds,
 * byte 16 on 32-bit ones (armv7) — with a sane version and page size), and the newest valid one's page count and
 * roots against the file's size. The layout is word-size specific, so a file written by the other word size is
 * refused too (it crashed armv7 in testing). A damaged file is STORE_CORRUPT, naming the file and what to do.
 */
function checkMagic(path: string): void {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return // absent: LMDB creates it; unreadable: LMDB's own open reports it
  }
  try {
    checkOpened(path, fd)
  } finally {
    closeSync(fd)
  }
}

interface Meta {
  valid: boolean
  pageSize: number
  lastPage: bigint
  txnid: bigint
  roots: bigint[]
}

function checkOpened(path: string, fd: number): void {
  const size = fstatSync(fd).size
  if (size === 0) return
  const word = process.arch === 'arm' || process.arch === 'ia32' ? 4 : 8
  const ours = 2 * word + 8
  const theirs = word === 4 ? 24 : 16
  const head = read(fd, 0, 32)
  if (head.length >= 28 && head.readUInt32LE(ours) !== 0xbeefc0de && head.readUInt32LE(theirs) === 0xbeefc0de) {
    throw new TeaError(
      'STORE_ERROR',
      `${path} was written by a ${word === 4 ? '64' : '32'}-bit build of tea, and LMDB files are specific to the word size`,
      {
        details: { path },
        hint: 'use a data dir made on this kind of board, or choose another --data-dir',
      },
    )
  }
  const first = readMeta(fd, 0, word)
  const second = readMeta(fd, first.valid ? first.pageSize : 4096, word)
  if (!first.valid && !second.valid) {
    const magic = (buf: Buffer): boolean => buf.length >= ours + 4 && buf.readUInt32LE(ours) === 0xbeefc0de
    if (!magic(head) && !magic(read(fd, 4096, ours + 4))) throw notLmdb(path)
    throw corrupt(path, 'both of its meta pages are damaged', size)
  }
  // LMDB reads both meta pages and crashed (SIGSEGV) on one damaged page even with the other intact.
  if (!first.valid || !second.valid) throw corrupt(path, `its ${first.valid ? 'second' : 'first'} meta page is damaged`, size)
  const pageSize = first.pageSize
  if (size < 2 * pageSize) throw corrupt(path, `it is cut short: ${size} bytes, less than its two meta pages`, size)
  const invalidPage = word === 8 ? 0xffffffffffffffffn : 0xffffffffn
  for (const meta of [first, second]) {
    const needed = (meta.lastPage + 1n) * BigInt(pageSize)
    if (BigInt(size) < needed) throw corrupt(path, `it is cut short: ${size} bytes, where its own meta page needs ${needed}`, size)
    if (meta.roots.some((r) => r !== invalidPage && r > meta.lastPage))
      throw corrupt(path, 'a meta page points past the end of the file', size)
  }
}

/** One meta page at `offset`: magic and version checked; the page size, last page, transaction and the two roots. */
function readMeta(fd: number, offset: number, word: number): Meta {
  const base = 2 * word + 8
  const dbStart = base + 8 + 2 * word
  const dbSize = 8 + 5 * word
  const lastAt = dbStart + 2 * dbSize
  const buf = read(fd, offset, lastAt + 2 * word)
  const none: Meta = { valid: false, pageSize: 0, lastPage: 0n, txnid: 0n, roots: [] }
  if (buf.length < lastAt + 2 * word) return none
  const uint = (at: number): bigint => (word === 8 ? buf.readBigUInt64LE(at) : BigInt(buf.readUInt32LE(at)))
  const version = buf.readUInt32LE(base + 4)
  const pageSize = buf.readUInt32LE(dbStart)
  const sane =
    buf.readUInt32LE(base) === 0xbeefc0de &&
    (version === 1 || version === 2) &&
    pageSize >= 512 &&
    pageSize <= 65536 &&
    (pageSize & (pageSize - 1)) === 0
  if (!sane) return none
  const roots = [0, 1].map((i) => uint(dbStart + i * dbSize + 8 + 4 * word))
  return { valid: true, pageSize, lastPage: uint(lastAt), txnid: uint(lastAt + word), roots }
}

function read(fd: number, offset: number, length: number): Buffer {
  const buf = Buffer.alloc(length)
  const n = readSync(fd, buf, 0, length, offset)
  return buf.subarray(0, n)
}

function notLmdb(path: string): TeaError {
  return new TeaError('STORE_ERROR', `${path} is not an LMDB file (no LMDB meta page at its start)`, {
    details: { path },
    hint: 'move the file away (its runs and memory cannot be read) or choose another --data-dir',
  })
}

function corrupt(path: string, what: string, size: number): TeaError {
  return new TeaError('STORE_CORRUPT', `the store file ${path} is damaged: ${what}; tea does not open it (LMDB would crash on it)`, {
    details: { path, size },
    hint: `move it away to keep it (mv ${path} ${path}.damaged) and tea starts a new store there; its runs and memory are lost unless you have a backup of the data dir`,
  })
}

/**
 * Anything that is not already a TeaError (an lmdb error, an encoder error) becomes STORE_ERROR saying where — or
 * STORE_FULL when the disk under the data dir is out of space. lmdb reports a full disk as MDB_MAP_FULL, ENOSPC,
 * or (writing through its map on tmpfs and some other filesystems) a failed commit whose cause is only EIO, so the
 * free space is checked as well. A failed commit's `commitError` is a promise lmdb rejects on its own; it is
 * handled here so it cannot end the process as an unhandled rejection.
 */
function wrapStoreError(what: string, e: unknown, dataDir?: string): TeaError {
  if (isTeaError(e)) return e
  const commitError = (e as { commitError?: Promise<unknown> } | null)?.commitError
  if (commitError && typeof commitError.catch === 'function') commitError.catch(() => {})
  const message = e instanceof Error ? e.message : String(e)
  const code = (e as { code?: unknown } | null)?.code
  if (
    /MDB_MAP_FULL|ENOSPC|EDQUOT|No space left/i.test(message) ||
    code === 'ENOSPC' ||
    code === 'EDQUOT' ||
    (dataDir && commitError && diskFull(dataDir))
  ) {
    return new TeaError('STORE_FULL', `${what} failed: the disk holding ${dataDir ?? 'the store'} is full`, {
      cause: e,
      ...(dataDir && { details: { path: dataDir } }),
      hint: 'free space on that disk (tea runs prune removes finished runs), then resume the run',
    })
  }
  return new TeaError('STORE_ERROR', `${what} failed: ${message}`, { cause: e })
}

let guarding = false

/**
 * A commit that fails (a full disk) rejects every write of its transaction, including writes lmdb makes on its
 * own — saving the codec's shared structures — which no caller awaits; Node would end the process on that
 * unhandled rejection, with a stack, before the run could record its failure. Such lmdb commit failures are
 * dropped here (the awaited write of the same commit reports it, as STORE_FULL or STORE_ERROR); any other
 * unhandled rejection is rethrown, so it still ends the process as Node's default would.
 */
function guardCommitFailures(): void {
  if (guarding) return
  guarding = true
  process.on('unhandledRejection', (reason) => {
    if (typeof reason === 'object' && reason !== null && 'commitError' in reason) {
      ;(reason as { commitError: Promise<unknown> }).commitError.catch(() => {})
      return
    }
    throw reason
  })
}

function notWritable(dataDir: string, cause: unknown): TeaError {
  if (isTeaError(cause)) return cause
  const why = cause instanceof Error ? cause.message : String(cause)
  return new TeaError('STORE_NOT_WRITABLE', `the data dir ${dataDir} is not a writable directory (${why})`, {
    cause,
    details: { path: dataDir },
    hint: 'choose another one with --data-dir DIR or TEA_DATA_DIR',
  })
}

type PutWithOptions = (key: Key, value: Uint8Array, options?: { noOverwrite: boolean }) => Promise<boolean>

interface Codec {
  encoder: { encode(value: unknown): Uint8Array }
  decoder: { decode(bytes: Uint8Array): unknown }
}

/**
 * One named database as a Kv: a msgpack handle for its codec (shared structures) and a binary one for bytes. A
 * `lazy` one opens them at its first use, so a run that plans nothing and remembers nothing never opens `plans`
 * and `memory` (four handles, ~0.8 ms of a start; issue 14). Only a database that no `ifAbsent` block writes into
 * may be lazy: its first use must not fall inside another database's transaction callback.
 */
function kvOf(env: RootDatabase, name: DbName, lazy = false): Kv {
  const handles = once(() => ({
    codec: env.openDB({ name, encoding: 'msgpack', sharedStructuresKey: STRUCTURES }) as unknown as Codec,
    raw: env.openDB({ name, encoding: 'binary' }) as Database<Uint8Array, Key>,
  }))
  if (!lazy) handles()
  const raw = (): Database<Uint8Array, Key> => handles().raw
  return {
    get: (key) => raw().get(key),
    ifAbsent: (key, writes) => raw().ifNoExists(key, writes),
    // lmdb-js accepts put options ({noOverwrite}) at run time; its typings only list the version overload.
    put: (key, bytes, opts) => (raw().put as PutWithOptions)(key, bytes, opts?.noOverwrite ? { noOverwrite: true } : undefined),
    remove: (key) => raw().remove(key),
    range: (start, end, reverse = false) => raw().getRange({ start, end, reverse }),
    keys: (start, end) => raw().getKeys({ start, end }),
    encode: (value) => handles().codec.encoder.encode(escapeProtoKeys(value)),
    decode: (bytes) => restoreProtoKeys(handles().codec.decoder.decode(bytes)),
    increment(key) {
      const db = raw()
      return db.transactionSync(() => {
        const old = db.get(key)
        const n = (old?.length === 4 ? Buffer.from(old).readUInt32LE(0) : 0) + 1
        const bytes = Buffer.alloc(4)
        bytes.writeUInt32LE(n, 0)
        db.putSync(key, bytes) // inside transactionSync: joins its transaction
        return n
      })
    },
    update(key, update) {
      const db = raw()
      db.transactionSync(() => {
        db.putSync(key, update(db.get(key))) // inside transactionSync: joins its transaction
      })
    },
    keyBytes: (key) => (lmdb as unknown as { keyValueToBuffer(k: Key): Uint8Array }).keyValueToBuffer(key).length,
  }
}

/**
 * Collections' databases (collections/db.ts), opened at their first use. A missing one is not created by a read
 * (`openDB` with `create: false`), so a query naming a hundred made-up collections cannot fill the environment's
 * table of databases. Records are msgpack without shared structures: a collection is written inside synchronous
 * transactions, where lmdb saving new structures of its own would join (or race) the caller's.
 */
function collectionDbs(env: RootDatabase, dataDir: string): CollectionDbs {
  const opened = new Map<string, CollectionDb>()
  return {
    open(name, create) {
      const known = opened.get(name)
      if (known) return known
      const exists = env.openDB({ name, encoding: 'binary', create: false } as never) as Database<Uint8Array, Key> | undefined
      if (!exists && !create) return undefined
      if (!exists && name.startsWith('c:')) {
        let count = 0
        for (const key of env.getKeys()) if (typeof key === 'string' && key.startsWith('c:')) count++
        if (count >= MAX_COLLECTIONS) {
          throw new TeaError('DOCUMENT_INVALID', `the store in ${dataDir} holds ${count} collections, as many as it may`, {
            hint: 'store into an existing collection (metadata and filters keep documents apart)',
          })
        }
      }
      const raw = exists ?? (env.openDB({ name, encoding: 'binary' }) as Database<Uint8Array, Key>)
      const records = env.openDB({ name, encoding: 'msgpack' }) as Database<unknown, Key>
      const db: CollectionDb = {
        get: (key) => records.get(key),
        getBytes: (key) => raw.get(key),
        range: (start, end) => records.getRange({ start, end }),
        rangeBytes: (start, end) => raw.getRange({ start, end }),
        write: (writes) =>
          raw.transactionSync(() =>
            writes({
              put: (key, record) => void records.putSync(key, record),
              putBytes: (key, bytes) => void raw.putSync(key, bytes),
              remove: (key) => void raw.removeSync(key),
            }),
          ),
      }
      opened.set(name, db)
      return db
    },
  }
}

// --- internal (tests) ---

/** The id of the last transaction committed to a data dir's store, from its meta pages: how many commits a run made. */
export function _lastCommit(dataDir: string): bigint {
  const fd = openSync(join(dataDir, 'tea.lmdb'), 'r')
  try {
    const word = process.arch === 'arm' || process.arch === 'ia32' ? 4 : 8
    const first = readMeta(fd, 0, word)
    const second = readMeta(fd, first.pageSize || 4096, word)
    return first.txnid > second.txnid ? first.txnid : second.txnid
  } finally {
    closeSync(fd)
  }
}

/**
 * Raw byte access to one named database of a data dir, for tests that damage records on purpose. Not for
 * production code: it bypasses every record check.
 */
export function _openRawDb(dataDir: string, name: DbName) {
  const env = open({ path: join(dataDir, 'tea.lmdb'), ...ENV_OPTIONS })
  const raw: Database<Uint8Array, Key> = env.openDB({ name, encoding: 'binary' })
  const keyBytes = (key: Key): number => (lmdb as unknown as { keyValueToBuffer(k: Key): Uint8Array }).keyValueToBuffer(key).length
  return {
    keys: (start: Key, end: Key): Key[] => [...raw.getKeys({ start, end })],
    get: (key: Key): Uint8Array | undefined => raw.get(key),
    put: (key: Key, bytes: Uint8Array): Promise<boolean> => raw.put(key, bytes),
    /** Key plus value bytes of the entries in [start, end), or of all entries (benchmarks). */
    bytes(start?: Key, end?: Key): number {
      let total = 0
      for (const { key, value } of raw.getRange({ start, end })) total += keyBytes(key) + value.length
      return total
    },
    /** Pages this database occupies in the file, as bytes (benchmarks). */
    pageBytes(): number {
      const s = raw.getStats() as Record<string, number>
      return ((s.treeBranchPageCount ?? 0) + (s.treeLeafPageCount ?? 0) + (s.overflowPages ?? 0)) * (s.pageSize ?? 4096)
    },
    close: (): Promise<void> => env.close(),
  }
}
