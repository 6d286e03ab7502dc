/**
 * What a full disk does to LMDB, and how tea keeps it to one coded message (STORE_FULL) instead of a stack or a
 * crash (security probe 2, finding K; issue 9 point 3).
 *
 * - lmdb-js prints a failed commit's error itself — `console.error(error)` in its write callback (lmdb 3.5
 *   write.js, `startWriting`) — and then rejects the commit's writes with the same error. The awaited write is
 *   reported by tea (wrapStoreError: STORE_FULL or STORE_ERROR), so the print only adds
 *   `Error: Input/output error at Function.<anonymous> (tea.cjs:…) { code: 5 }` to stderr. Those prints are
 *   dropped. (LMDB's C code also writes `mdb_page_spill error 5` to stderr; that is below JavaScript's reach.)
 * - A new store's files are written through memory maps (the lock file always; the data file's first pages on
 *   some filesystems). On a full filesystem a write to a mapped page that has no block behind it is SIGBUS: the
 *   process dies with no message at all. So a store whose files still need space is not opened when the disk is
 *   full; an existing store still opens, to read runs and to prune them.
 */

import { statSync, statfsSync } from 'node:fs'
import { TeaError } from '../core/errors.ts'

/** Below this much free space a commit most likely failed for want of it, and a new store is not begun. */
const LOW_SPACE_BYTES = 1024 * 1024

/** Less than 1 MiB free for this process under `dir` (statfs): what a failed commit then most likely met. */
export function diskFull(dir: string): boolean {
  try {
    const s = statfsSync(dir)
    return s.bavail * s.bsize < LOW_SPACE_BYTES
  } catch {
    return false
  }
}

/**
 * STORE_FULL before LMDB maps a store it would have to grow into a full disk: the data file absent or empty, or
 * the lock file absent or with no block behind it yet (a process that died writing it left it so).
 */
export function checkRoomToOpen(dataDir: string, file: string): void {
  if (needsSpace(file) && diskFull(dataDir)) throw storeFull(dataDir)
}

/** The data dir cannot be begun (its folder or its files) for want of space. */
export function storeFull(dataDir: string, cause?: unknown): TeaError {
  return new TeaError('STORE_FULL', `cannot begin the store in ${dataDir}: the disk holding it is full`, {
    ...(cause !== undefined && { cause }),
    details: { path: dataDir },
    hint: 'free space on that disk (tea runs prune removes finished runs from a store there), or choose another --data-dir',
  })
}

function needsSpace(file: string): boolean {
  const data = sizeOf(file)
  const lock = sizeOf(`${file}-lock`)
  // LMDB touches only the lock file's pages it uses, so a lock file in use is sparse too: only one with no block
  // at all (never written, or its writer died) still needs space.
  return data === undefined || data.size === 0 || lock === undefined || lock.blocks === 0
}

function sizeOf(path: string): { size: number; blocks: number } | undefined {
  try {
    const s = statSync(path)
    return { size: s.size, blocks: s.blocks }
  } catch {
    return undefined
  }
}

const quieted = new WeakSet<Pick<Console, 'error'>>()

/**
 * Drops lmdb's own print of a failed commit (see the top of this file) from `target`'s error (the process's
 * console; once each). lmdb's errors are the only ones whose `code` is a number (LMDB's status: 5 for EIO, -30792
 * for MDB_MAP_FULL); Node's have string codes and tea's are TeaErrors, so every other console.error still prints.
 */
export function quietLmdbCommitErrors(target: Pick<Console, 'error'> = console): void {
  if (quieted.has(target)) return
  quieted.add(target)
  const print = target.error.bind(target)
  target.error = (...args: unknown[]): void => {
    if (args.length === 1 && isLmdbStatusError(args[0])) return
    print(...args)
  }
}

function isLmdbStatusError(value: unknown): boolean {
  return value instanceof Error && typeof (value as { code?: unknown }).code === 'number'
}
