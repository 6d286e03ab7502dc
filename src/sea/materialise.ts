/**
 * Writes what a single executable carries into the cache dir (cache-dir.ts), content-addressed
 * (`<kind>/<sha256 prefix>/<name>`), once, through a temp file + rename so that concurrent first starts are safe,
 * and reuses it afterwards.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { TeaError } from '../core/errors.ts'
import { CACHE_HINT, cacheDir } from './cache-dir.ts'
import type { CarriedFile } from './sea-api.ts'

/**
 * Writes `bytes` to `<cache>/<kind>/<hash>/<name>` unless an identical-size file is already there; returns the path.
 * `hash` defaults to the bytes' own; files that must sit in one folder (an engine that finds its files beside each
 * other) share one given by the caller.
 */
export function materialise(kind: string, name: string, bytes: Uint8Array, root: string = cacheDir(), hash?: string): string {
  hash ??= createHash('sha256').update(bytes).digest('hex').slice(0, 16)
  const file = join(root, kind, hash, name)
  try {
    if (statSync(file).size === bytes.byteLength) return file
  } catch {
    // not there yet
  }
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  try {
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(tmp, bytes, { mode: 0o755 })
    renameSync(tmp, file)
  } catch (e) {
    try {
      unlinkSync(tmp)
    } catch {
      // nothing to clean up
    }
    throw new TeaError('CACHE_DIR_UNUSABLE', `cannot write ${name} into the cache directory ${root}: ${(e as Error).message}`, {
      cause: e,
      hint: CACHE_HINT,
    })
  }
  return file
}

/**
 * The cache-dir path of a carried file whose hash and size the build recorded (`known`), if a complete copy is
 * already there: found by its name alone, without reading the carried bytes. Undefined otherwise.
 */
export function materialised(
  kind: string,
  name: string,
  known: CarriedFile | undefined,
  root: string = cacheDir(),
  folder = known?.hash,
): string | undefined {
  if (!known) return undefined
  const file = join(root, kind, folder!, name)
  try {
    return statSync(file).size === known.size ? file : undefined
  } catch {
    return undefined
  }
}
