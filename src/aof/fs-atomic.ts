/**
 * Small filesystem primitives with the guarantees the store relies on: a file written through `writeFileAtomic`
 * is either the old or the new content, never a torn mix (temp file in the same folder, fsync, rename).
 */

import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { basename, dirname, join } from 'node:path'

export function writeFileAtomic(path: string, content: string): void {
  const dir = dirname(path)
  mkdirSync(dir, { recursive: true })
  // Dot-prefixed so listings and lint skip half-written files left by a crash.
  const tmp = join(dir, `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`)
  const fd = openSync(tmp, 'w')
  try {
    writeSync(fd, content)
    fsyncSync(fd)
  } catch (e) {
    closeSync(fd)
    rmSync(tmp, { force: true })
    throw e
  }
  closeSync(fd)
  renameSync(tmp, path)
}

/** Appends one line with a single `write` on an O_APPEND descriptor, so concurrent writers never interleave. */
export function appendLine(path: string, line: string): void {
  let fd: number
  try {
    fd = openSync(path, 'a')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
    mkdirSync(dirname(path), { recursive: true })
    fd = openSync(path, 'a')
  }
  try {
    writeSync(fd, line.endsWith('\n') ? line : `${line}\n`)
  } finally {
    closeSync(fd)
  }
}

export function errno(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code
}
