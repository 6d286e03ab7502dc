/**
 * Files a start keeps in the cache dir for later starts (the program's code cache, kept agent parses): written whole
 * or not at all (a rename, so two starts at once never read half a file), best effort (a read-only or full cache
 * dir only means the next start does the work again), and pruned to the newest few — only among the entries the
 * cache itself names, so that a folder that is not the cache's own is never emptied. Nothing heavy is imported
 * here: the bundle's loader uses it before the program has loaded.
 */

import { mkdirSync, readdirSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

/** Writes `file` atomically, then runs `after` (pruning); any failure leaves at most the old file. */
export function writeKept(file: string, data: string | Uint8Array, after?: () => void): void {
  // Worker threads of one process may write the same file at once (a pool's Python interpreters): each its own name.
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`
  try {
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(tmp, data)
    renameSync(tmp, file)
    after?.()
  } catch {
    try {
      unlinkSync(tmp)
    } catch {
      // nothing to clean up
    }
  }
}

/** Removes all but the `keep` newest entries of `dir` whose names `ours` accepts; other entries are left alone. */
export function keepNewest(dir: string, keep: number, ours: (name: string) => boolean): void {
  const names = readdirSync(dir).filter(ours)
  if (names.length <= keep) return
  const entries = names.map((name) => ({ name, at: statSync(join(dir, name)).mtimeMs })).sort((a, b) => b.at - a.at)
  for (const old of entries.slice(keep)) rmSync(join(dir, old.name), { recursive: true, force: true })
}
