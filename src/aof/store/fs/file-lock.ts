/**
 * A cross-process lock made of a file. Acquire = create `<name>.lock` with O_EXCL (`wx`), holding the owner's pid,
 * host, time and a random token; release = delete it if it still carries our token. A lock is stale when its
 * owner is a dead process on this host, or (for owners on other hosts sharing the folder) when it is older than
 * `staleMs`. A stale lock is broken under a second O_EXCL file (`.takeover`) after re-reading it, so two waiters
 * cannot both break it and one of them delete a fresh lock by mistake.
 */

import { closeSync, openSync, rmSync, statSync, writeSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { dirname } from 'node:path'
import { TeaError } from '../../../core/errors.ts'
import { sleep } from '../../../core/util.ts'
import { errno, mkdirs, readRegular, writeError } from './fs-atomic.ts'
import { processAlive } from '../../../core/process.ts'

export interface LockOptions {
  /** Give up waiting after this long (default 30 s). */
  timeoutMs?: number
  /** A lock older than this from another host, or with unreadable content, may be broken (default 30 s). */
  staleMs?: number
}

interface Owner {
  pid: number
  host: string
  at: number
  token: string
}

export async function withFileLock<T>(path: string, options: LockOptions, fn: () => Promise<T> | T): Promise<T> {
  const token = await acquire(path, options)
  try {
    return await fn()
  } finally {
    release(path, token)
  }
}

async function acquire(path: string, options: LockOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? 30_000
  const staleMs = options.staleMs ?? 30_000
  const token = randomBytes(8).toString('hex')
  const started = Date.now()
  for (let attempt = 0; ; attempt++) {
    if (tryCreate(path, JSON.stringify({ pid: process.pid, host: hostname(), at: Date.now(), token }))) return token
    const seen = readRaw(path)
    if (seen !== undefined && isStale(seen, path, staleMs)) breakStale(path, seen, staleMs)
    else if (Date.now() - started > timeoutMs) {
      throw new TeaError('AOF_LOCKED', `could not lock ${path} within ${timeoutMs} ms: held by ${seen ?? 'an unknown owner'}`, {
        hint: 'another tea process is working on this task; retry, or remove the lock file if its owner is gone',
      })
    } else await sleep(Math.min(50, 1 + attempt) * (0.5 + Math.random()))
  }
}

function tryCreate(path: string, content: string): boolean {
  let fd: number
  try {
    fd = openSync(path, 'wx')
  } catch (e) {
    if (errno(e) === 'EEXIST') return false
    // A read-only or foreign data dir fails here first, as STORE_NOT_WRITABLE with the path (D8).
    if (errno(e) !== 'ENOENT') throw writeError(e, path)
    mkdirs(dirname(path))
    return tryCreate(path, content)
  }
  try {
    writeSync(fd, content)
  } catch (e) {
    closeSync(fd)
    rmSync(path, { force: true })
    throw writeError(e, path)
  }
  closeSync(fd)
  return true
}

/**
 * The lock file's content; undefined when it is gone or unreadable. Something other than a regular file there (a
 * FIFO would block the read) is never a lock of ours: it reads as unreadable, so waiters time out with AOF_LOCKED
 * instead of hanging.
 */
function readRaw(path: string): string | undefined {
  try {
    return readRegular(path)
  } catch {
    return undefined
  }
}

function isStale(raw: string, path: string, staleMs: number): boolean {
  let owner: Owner | undefined
  try {
    owner = JSON.parse(raw) as Owner
  } catch {
    owner = undefined
  }
  if (!owner || typeof owner.pid !== 'number') {
    // Empty or torn: a creator that died between open and write. Give a live creator time to finish writing.
    return ageMs(path) > Math.min(staleMs, 2_000)
  }
  if (owner.host === hostname()) return !processAlive(owner.pid)
  return Date.now() - owner.at > staleMs
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs
  } catch {
    return 0
  }
}

function breakStale(path: string, seen: string, staleMs: number): void {
  const takeover = `${path}.takeover`
  if (!tryCreate(takeover, String(process.pid))) {
    if (ageMs(takeover) > staleMs) rmSync(takeover, { force: true })
    return
  }
  try {
    if (readRaw(path) === seen) rmSync(path, { force: true })
  } finally {
    rmSync(takeover, { force: true })
  }
}

function release(path: string, token: string): void {
  const raw = readRaw(path)
  if (raw !== undefined && raw.includes(`"token":"${token}"`)) rmSync(path, { force: true })
}
