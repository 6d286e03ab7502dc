/**
 * Small filesystem primitives with the guarantees the store relies on: a file written through `writeFileAtomic`
 * is either the old or the new content, never a torn mix (temp file in the same folder, fsync, rename); a file read
 * through `readRegular` is a regular file, never a FIFO that would block the process or a symlink that would read
 * something outside the data dir (issue 9, D6).
 *
 * Every write failure leaves here as a TeaError naming the path: STORE_NOT_WRITABLE for a read-only or foreign data
 * dir, STORE_FULL for a full disk, STORE_ERROR otherwise (D8: a read-only data dir was an internal error with a
 * stack). Read failures keep their errno (`ENOENT` is an answer, not a failure, for most readers); `readError`
 * turns the others into a coded error once the caller knows what the file is.
 */

import { closeSync, constants, fstatSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { basename, dirname, join } from 'node:path'
import { TeaError, isTeaError } from '../../../core/errors.ts'
import { readRegularFile } from '../../../core/regular-file.ts'

/** O_NOFOLLOW: never append through a symlink; O_NONBLOCK: a FIFO where the log should be fails at once (ENXIO). */
const APPEND_FLAGS =
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY

export function writeFileAtomic(path: string, content: string | Uint8Array): void {
  const dir = dirname(path)
  mkdirs(dir)
  // Dot-prefixed so listings and lint skip half-written files left by a crash. `wx`: never through a symlink.
  const tmp = join(dir, `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`)
  let fd: number
  try {
    fd = openSync(tmp, 'wx')
  } catch (e) {
    throw writeError(e, tmp)
  }
  try {
    if (typeof content === 'string') writeSync(fd, content)
    else writeSync(fd, content)
    fsyncSync(fd)
    closeSync(fd)
  } catch (e) {
    closeQuietly(fd)
    rmSync(tmp, { force: true })
    throw writeError(e, path)
  }
  try {
    renameSync(tmp, path)
  } catch (e) {
    rmSync(tmp, { force: true })
    throw writeError(e, path)
  }
}

/** Appends with a single `write` on an O_APPEND descriptor, so concurrent writers never interleave. */
export function appendLine(path: string, line: string): void {
  let fd: number
  try {
    fd = openAppend(path)
  } catch (e) {
    if (errno(e) !== 'ENOENT') throw appendError(e, path)
    mkdirs(dirname(path))
    try {
      fd = openAppend(path)
    } catch (err) {
      throw appendError(err, path)
    }
  }
  try {
    writeSync(fd, line.endsWith('\n') ? line : `${line}\n`)
  } catch (e) {
    throw writeError(e, path)
  } finally {
    closeSync(fd)
  }
}

/**
 * `mkdir -p`, reporting the real cause: Node's recursive mkdir says ENOENT when the file system is read-only (the
 * D8 message), so each missing level is created on its own.
 */
export function mkdirs(path: string): void {
  try {
    mkdirSync(path)
  } catch (e) {
    const code = errno(e)
    if (code === 'EEXIST') return
    if (code !== 'ENOENT' || dirname(path) === path) throw writeError(e, path)
    mkdirs(dirname(path))
    try {
      mkdirSync(path)
    } catch (err) {
      if (errno(err) !== 'EEXIST') throw writeError(err, path)
    }
  }
}

/** Deletes a file (or, with `recursive`, a folder); absent is fine. */
export function remove(path: string, recursive = false): void {
  try {
    rmSync(path, { force: true, recursive })
  } catch (e) {
    throw writeError(e, path)
  }
}

/** The content of a regular file as text; throws the errno-style error of `readRegularFile` otherwise. */
export function readRegular(path: string): string {
  return readRegularFile(path).toString('utf8')
}

/** True when `path` names nothing that could be read as a regular file: a symlink, FIFO, socket, device or folder. */
export function isNotRegular(e: unknown): boolean {
  const code = errno(e)
  return code === 'ELOOP' || code === 'EISDIR' || code === 'ENOTREG' || code === 'ENXIO'
}

/**
 * A read failure of `path` (a `what`: "task file", "run artifact") as a coded error that never quotes the file:
 * AOF_INVALID for something that is not a regular file, STORE_ERROR for the rest (permissions, I/O). ENOENT is left
 * to the caller (it means "moved" or "absent").
 */
export function readError(e: unknown, path: string, what: string): TeaError {
  if (isTeaError(e)) return e
  const code = errno(e)
  const why =
    code === 'ELOOP'
      ? 'is a symbolic link; AOF reads only regular files and never follows a link in its folders'
      : code === 'EISDIR'
        ? 'is a folder'
        : code === 'ENOTREG' || code === 'ENXIO'
          ? 'is not a regular file (a FIFO, socket or device); AOF never opens one'
          : `cannot be read (${code ?? (e instanceof Error ? e.message : String(e))})`
  return new TeaError(isNotRegular(e) ? 'AOF_INVALID' : 'STORE_ERROR', `the ${what} ${why}`, {
    cause: e,
    where: { file: path },
    ...(code ? { details: { errno: code } } : {}),
    ...(isNotRegular(e) ? { hint: `move it out of the data dir; a ${what} must be a plain file` } : {}),
  })
}

/** A write failure as a coded error naming the path (TeaErrors pass through). */
export function writeError(e: unknown, path: string): TeaError {
  if (isTeaError(e)) return e
  const code = errno(e)
  const cause = e instanceof Error ? e.message : String(e)
  if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') {
    const why = code === 'EROFS' ? 'the file system is read-only' : 'permission denied'
    return new TeaError('STORE_NOT_WRITABLE', `cannot write ${path}: ${why} (${code})`, {
      cause: e,
      details: { path, errno: code },
      hint: 'make the data dir writable (remount it read-write, or fix its owner or mode), or choose another with --data-dir DIR or TEA_DATA_DIR',
    })
  }
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new TeaError('STORE_FULL', `cannot write ${path}: the disk is full (${code})`, {
      cause: e,
      details: { path, errno: code },
      hint: 'free some space on the disk holding the data dir',
    })
  }
  return new TeaError('STORE_ERROR', `cannot write ${path}: ${cause}`, { cause: e, details: { path, ...(code ? { errno: code } : {}) } })
}

export function errno(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null | undefined)?.code
  return typeof code === 'string' ? code : undefined
}

// --- internal ---

function openAppend(path: string): number {
  const fd = openSync(path, APPEND_FLAGS, 0o644)
  try {
    // A FIFO with a reader opens; so does a device. Neither is a log.
    if (!fstatSync(fd).isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ENOTREG' })
  } catch (e) {
    closeQuietly(fd)
    throw e
  }
  return fd
}

/** An append that could not open its file: not-a-file refusals are read-style (AOF_INVALID), the rest write errors. */
function appendError(e: unknown, path: string): TeaError {
  return isNotRegular(e) ? readError(e, path, 'event log') : writeError(e, path)
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd)
  } catch {
    // already closed, or the close itself failed: the error being reported matters more
  }
}
