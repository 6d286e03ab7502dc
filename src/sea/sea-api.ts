/**
 * Access to `node:sea` without importing it statically: Node 20.11 (armv7) has no such module, and a static
 * import would fail the whole bundle at load there.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { builtin } from '../core/builtin.ts'
import { EMBEDDED } from './embedded.ts'

export interface SeaApi {
  getAsset(key: string): ArrayBuffer
  getAsset(key: string, encoding: 'utf8'): string
  /** The asset in place, without a copy (Node 20.12+); read-only. */
  getRawAsset?(key: string): ArrayBuffer
}

/**
 * The `node:sea` module when running inside a single executable that can carry assets, else undefined. A caller
 * that has a `require` (the bundle's loader) passes it, which saves building one.
 */
export function seaApi(req: (id: 'node:sea') => unknown = builtin): SeaApi | undefined {
  try {
    const sea = req('node:sea') as SeaApi & { isSea(): boolean }
    return sea.isSea() ? sea : undefined
  } catch {
    return undefined
  }
}

/** A SEA asset's bytes, or undefined when not in a SEA or the asset is absent. */
export function seaAsset(key: string, sea: SeaApi | undefined = seaApi()): Uint8Array | undefined {
  if (!sea) return undefined
  try {
    return new Uint8Array(sea.getAsset(key))
  } catch {
    return undefined
  }
}

/** `size` bytes of `file` starting `back` bytes before its end, or undefined when the file is shorter. */
function fromEnd(file: string, back: number, size: number): Uint8Array | undefined {
  let fd: number | undefined
  try {
    fd = openSync(file, 'r')
    const start = fstatSync(fd).size - back
    if (start < 0 || size > back) return undefined
    const bytes = Buffer.allocUnsafe(size)
    let read = 0
    while (read < size) {
      const n = readSync(fd, bytes, read, size - read, start + read)
      if (n === 0) return undefined
      read += n
    }
    return bytes
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** A file the executable carries, as the build recorded it: the first 16 hex digits of its SHA-256, and its size. */
export interface CarriedFile {
  hash: string
  size: number
  /**
   * The asset holding it with the other files of its feature (`<feature>.pack`, the files one after another), and
   * where in it. Node reads every asset's header at each start, and the kernel maps ~64 KB around each: a feature
   * carried as 21 assets (llama.cpp's libraries) cost every start 1.3 MiB of RSS, as one asset it costs one page.
   */
  pack?: string
  offset?: number
}

/**
 * The `pack` of files appended to the executable itself, after its SEA blob (Node 20.11, which has no assets:
 * scripts/build/sea-build.mjs); their `offset` counts back from the end of the file.
 */
export const EXECUTABLE_PACK = '<executable>'

/** A carried file's bytes, in place where Node allows (read-only): from its feature's pack, or its own asset. */
export function carriedBytes(key: string, sea: SeaApi | undefined = seaApi(), executable = process.execPath): Uint8Array | undefined {
  const known = carriedFile(key, sea)
  if (known?.pack === EXECUTABLE_PACK && known.offset !== undefined) return fromEnd(executable, known.offset, known.size)
  if (sea && known?.pack !== undefined && known.offset !== undefined) {
    try {
      const pack = sea.getRawAsset ? sea.getRawAsset(known.pack) : sea.getAsset(known.pack)
      return known.offset + known.size <= pack.byteLength ? new Uint8Array(pack, known.offset, known.size) : undefined
    } catch {
      return undefined
    }
  }
  return seaAsset(key, sea)
}

/** The SEA asset listing every other asset's CarriedFile, by asset name (Node 20.11: EMBEDDED.carried). */
export const CARRIED_ASSET = 'carried.json'

let carried: Readonly<Record<string, CarriedFile>> | null | undefined

/**
 * What the build recorded about a carried file, so that a copy already in the cache dir is found by its name
 * without reading (and hashing) the carried bytes on every start; undefined when unknown (then they are hashed).
 */
export function carriedFile(key: string, sea: SeaApi | undefined = seaApi()): CarriedFile | undefined {
  if (carried === undefined) {
    carried = EMBEDDED?.carried ?? null
    if (sea) {
      try {
        carried = JSON.parse(sea.getAsset(CARRIED_ASSET, 'utf8')) as Record<string, CarriedFile>
      } catch {
        // an executable built before the list existed
      }
    }
  }
  return carried?.[key]
}
