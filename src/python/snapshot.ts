/**
 * A memory snapshot of a started interpreter, kept in the cache dir. Starting CPython in Pyodide (its standard
 * library unpacked, its modules imported) takes 1.3–1.4 s on the x64 build machine and several times that on a
 * board; restoring the interpreter's memory as it stood right after that start takes ~0.2 s. The first start on a
 * machine makes the snapshot (~31 MB, once per Pyodide build) and later starts restore it; a snapshot that will not
 * restore is removed and made again. Every run of Python code starts from it (interpreter.ts), so it is written
 * 0600 in a 0700 folder with its SHA-256, and a file that does not match its digest is made again, never restored
 * (probe defect D1: a replaced snapshot ran its own code in every later Python node). The digest cannot stop
 * someone who runs as tea's own user: they could write the digest too; it stops anyone else, and damage. What a restored interpreter shares with the one the snapshot came from is
 * re-drawn after the restore (`RESEED`), except str hashing's seed, which Python fixes at its start: every start
 * from one snapshot hashes strings alike (as with a fixed PYTHONHASHSEED).
 *
 * Pyodide's options for this (`_makeSnapshot`, `_loadSnapshot`, `makeMemorySnapshot`) are marked internal by
 * Pyodide; test/python/snapshot.test.ts holds the version in package.json to them.
 */

import { createHash, randomBytes } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeSync,
} from 'node:fs'
import { dirname, join } from 'node:path'
import { keepNewest } from '../core/cache-files.ts'
import { cacheDir } from '../sea/cache-dir.ts'

/** Snapshots kept in all, the newest first: the current build's and one other (~31 MB each). */
const KEEP = 2
const NAME = /^[0-9a-f]{16}\.snap$/

/** The random state a started interpreter holds, drawn again (from os.urandom) after a restore. */
export const RESEED = [
  'import sys as _sys',
  "if 'random' in _sys.modules: _sys.modules['random'].seed()",
  "if 'tempfile' in _sys.modules: _sys.modules['tempfile']._name_sequence = None",
  'del _sys',
].join('\n')

const keys = new Map<string, string>()

/**
 * A restore holds the snapshot's bytes and the interpreter's memory, all of it touched, at once: a Python run peaks
 * ~36 MiB higher (bench/RESULTS.md, issue 14). `TEA_PYTHON_SNAPSHOT=0` starts every interpreter the slow way instead,
 * for a board whose memory is tighter than its time.
 */
export function snapshotsOff(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.TEA_PYTHON_SNAPSHOT
  return v === '0' || v === 'off' || v === 'false'
}

/**
 * Where the snapshot of the interpreter whose loader is `loader` is kept: named by the folder of Pyodide's files and
 * the size and time of its WebAssembly and standard library, so that another build of them never meets it.
 */
export function snapshotFile(loader: string): string {
  let key = keys.get(loader)
  if (!key) {
    const folder = dirname(loader)
    const marks = ['pyodide.asm.wasm', 'python_stdlib.zip'].map((f) => {
      const s = statSync(join(folder, f))
      return `${f}:${s.size}:${s.mtimeMs}`
    })
    key = createHash('sha256')
      .update([folder, ...marks].join('\n'))
      .digest('hex')
      .slice(0, 16)
    keys.set(loader, key)
  }
  return join(cacheDir(), 'python-snapshot', `${key}.snap`)
}

/** What the snapshot is read in; a chunk of it that is all zeros is not copied. */
const CHUNK = 64 * 1024
const ZEROS = Buffer.alloc(CHUNK)
/**
 * The file is this magic, then the SHA-256 of the interpreter's memory as tea wrote it, then that memory. A file
 * whose memory does not hash to its digest was not written by tea (or was damaged): it is never restored, and the
 * start makes the snapshot again.
 */
const MAGIC = Buffer.from('TEASNAP1')
const HEADER = MAGIC.length + 32

/**
 * The snapshot's bytes, or undefined when there is none yet or it is not the one tea wrote: not a plain file of
 * this user's that nobody else may write, or its bytes do not match its digest. Half of an interpreter's memory is
 * zeros: those chunks are left as the fresh array has them, pages never touched, so the bytes held during a restore
 * take ~15 MiB of memory, not 31.
 */
export function readSnapshot(file: string): Uint8Array | undefined {
  if (!privateFolder(dirname(file), false)) return undefined
  let fd: number
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch {
    return undefined
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile() || stat.nlink !== 1 || !ours(stat) || stat.size < HEADER) return undefined
    const header = Buffer.alloc(HEADER)
    if (readSync(fd, header, 0, HEADER, 0) !== HEADER || !header.subarray(0, MAGIC.length).equals(MAGIC)) return undefined
    const size = stat.size - HEADER
    const bytes = new Uint8Array(size)
    const chunk = Buffer.allocUnsafe(CHUNK)
    const hash = createHash('sha256')
    for (let at = 0; at < size; ) {
      const n = readSync(fd, chunk, 0, Math.min(CHUNK, size - at), HEADER + at)
      if (n === 0) return undefined // cut short while read
      const part = chunk.subarray(0, n)
      hash.update(part)
      if (part.compare(ZEROS, 0, n) !== 0) bytes.set(part, at)
      at += n
    }
    return hash.digest().equals(header.subarray(MAGIC.length)) ? bytes : undefined
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
}

/**
 * Keeps `bytes` as the snapshot, with its digest, whole or not at all (a rename), mode 0600 in a folder of mode 0700,
 * pruning other builds' snapshots; best effort.
 */
export function keepSnapshot(file: string, bytes: Uint8Array): void {
  const folder = dirname(file)
  if (!privateFolder(folder, true)) return
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
  try {
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
    try {
      for (const part of [Buffer.concat([MAGIC, createHash('sha256').update(bytes).digest()]), bytes])
        for (let at = 0; at < part.length; ) at += writeSync(fd, part, at)
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, file)
    keepNewest(folder, KEEP, (name) => NAME.test(name))
  } catch {
    rmSync(tmp, { force: true })
  }
}

/**
 * Whether `folder` is this user's and closed to everyone else (made so when it is ours; made first with `create`).
 * A folder another user owns or may write is not used: a snapshot there could be anyone's.
 */
function privateFolder(folder: string, create: boolean): boolean {
  try {
    if (create) mkdirSync(folder, { recursive: true, mode: 0o700 })
    const stat = lstatSync(folder)
    if (!stat.isDirectory() || !ours(stat)) return false
    if ((stat.mode & 0o077) !== 0) chmodSync(folder, 0o700)
    return true
  } catch {
    return false
  }
}

function ours(stat: Stats): boolean {
  return typeof process.getuid !== 'function' || stat.uid === process.getuid()
}

/** Removes a snapshot that would not restore (cut short, or from another Pyodide), so that the next start makes one. */
export function dropSnapshot(file: string): void {
  rmSync(file, { force: true })
}
