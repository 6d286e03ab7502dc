/**
 * A memory snapshot of a started interpreter, kept in the cache dir. Starting CPython in Pyodide (its standard
 * library unpacked, its modules imported) takes 1.3–1.4 s on the x64 build machine and several times that on a
 * board; restoring the interpreter's memory as it stood right after that start takes ~0.2 s. The first start on a
 * machine makes the snapshot (~31 MB, once per Pyodide build) and later starts restore it; a snapshot that will not
 * restore is removed and made again. What a restored interpreter shares with the one the snapshot came from is
 * re-drawn after the restore (`RESEED`), except str hashing's seed, which Python fixes at its start: every start
 * from one snapshot hashes strings alike (as with a fixed PYTHONHASHSEED).
 *
 * Pyodide's options for this (`_makeSnapshot`, `_loadSnapshot`, `makeMemorySnapshot`) are marked internal by
 * Pyodide; test/python/snapshot.test.ts holds the version in package.json to them.
 */

import { createHash } from 'node:crypto'
import { closeSync, fstatSync, openSync, readSync, rmSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { keepNewest, writeKept } from '../core/cache-files.ts'
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
 * The snapshot's bytes, or undefined when there is none yet. Half of an interpreter's memory is zeros: those chunks
 * are left as the fresh array has them, pages never touched, so the bytes held during a restore take ~15 MiB of
 * memory, not 31.
 */
export function readSnapshot(file: string): Uint8Array | undefined {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch {
    return undefined
  }
  try {
    const size = fstatSync(fd).size
    const bytes = new Uint8Array(size)
    const chunk = Buffer.allocUnsafe(CHUNK)
    for (let at = 0; at < size; ) {
      const n = readSync(fd, chunk, 0, Math.min(CHUNK, size - at), at)
      if (n === 0) return bytes.subarray(0, at) // cut short while read: Pyodide refuses it, and it is made again
      if (chunk.compare(ZEROS, 0, n, 0, n) !== 0) bytes.set(chunk.subarray(0, n), at)
      at += n
    }
    return bytes
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
}

/** Keeps `bytes` as the snapshot (whole or not at all), pruning other builds' snapshots; best effort. */
export function keepSnapshot(file: string, bytes: Uint8Array): void {
  writeKept(file, bytes, () => keepNewest(dirname(file), KEEP, (name) => NAME.test(name)))
}

/** Removes a snapshot that would not restore (cut short, or from another Pyodide), so that the next start makes one. */
export function dropSnapshot(file: string): void {
  rmSync(file, { force: true })
}
