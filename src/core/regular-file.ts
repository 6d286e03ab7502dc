/**
 * Opening a file to read it only when it is a plain file (issue 9, probe defect D6). `readFileSync` on a FIFO
 * blocks in open() until some writer appears — synchronously, so the event loop and every signal handler with it —
 * and on a symlink it reads whatever the link names (`/etc/passwd`), which an error message may then quote.
 *
 * So the file is opened with O_NOFOLLOW (a symlink is refused with ELOOP, never followed), O_NONBLOCK (a FIFO opens
 * at once instead of waiting; on a regular file the flag changes nothing) and O_NOCTTY, and the descriptor is
 * fstat'ed: what is checked is the very file that will be read, whatever the name points to by then. A cheap lstat
 * before the open keeps the common non-file cases (folders, FIFOs, devices, sockets) from being opened at all.
 *
 * Refusals are errno-style errors (`code` ELOOP, EISDIR, or ENOTREG — not an errno: ours, for FIFOs, sockets and
 * devices), so callers that already map errno codes (file.*, the AOF store) treat them like any other.
 */

import { type Stats, closeSync, constants, fstatSync, lstatSync, openSync, readFileSync } from 'node:fs'

const READ_REGULAR_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY

/** A descriptor of a regular file open for reading, and its stat; the caller closes `fd`. */
export interface RegularFile {
  fd: number
  stat: Stats
}

/** Opens `path` for reading if it is a regular file (not through a symlink); throws ELOOP, EISDIR or ENOTREG else. */
export function openRegularFile(path: string): RegularFile {
  refuseNonRegular(lstatSync(path))
  const fd = openSync(path, READ_REGULAR_FLAGS)
  try {
    const stat = fstatSync(fd)
    refuseNonRegular(stat)
    return { fd, stat }
  } catch (e) {
    closeSync(fd)
    throw e
  }
}

/** The whole of a regular file (see `openRegularFile` for what is refused). */
export function readRegularFile(path: string): Buffer {
  const { fd } = openRegularFile(path)
  try {
    return readFileSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** An errno-style error: `code` is what callers branch on. */
function errnoError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code })
}

function refuseNonRegular(stat: Stats): void {
  if (stat.isFile()) return
  if (stat.isSymbolicLink()) throw errnoError('ELOOP', 'is a symbolic link (not followed)')
  if (stat.isDirectory()) throw errnoError('EISDIR', 'is a folder, not a file')
  throw errnoError('ENOTREG', 'is not a regular file (a FIFO, socket or device)')
}
