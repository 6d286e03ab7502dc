/**
 * Access to `node:sea` without importing it statically: Node 20.11 (armv7) has no such module, and a static
 * import would fail the whole bundle at load there. `createRequire` is used because the `require` a SEA main
 * script receives loads built-ins only, and from source (ESM) there is no `require` at all.
 */
import { createRequire } from 'node:module'

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
export function seaApi(req: (id: string) => unknown = createRequire(process.execPath)): SeaApi | undefined {
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
