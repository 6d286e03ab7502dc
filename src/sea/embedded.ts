/**
 * Payloads carried inside the bundle text itself, for runtimes that cannot carry SEA assets (Node 20.11, the
 * newest armv7 Node on npm, predates `node:sea` and assets). From source and in every other build this stays
 * `undefined`; scripts/build/plugins.mjs replaces this module's contents when it builds the armv7 SEA main.
 */

export interface Embedded {
  /** lmdb's native addon (`.node`), base64. */
  lmdbNode?: string
  /** The plain bundle's text, which tinypool workers load as their task module. */
  workerBundle?: string
  /** Files a feature reads at run time (the Prolog engine's), base64, by asset name. */
  files?: Record<string, string>
  /** Hash and size of each of the above, by asset name (`lmdb.node`, `tea.cjs`, …): src/sea/sea-api.ts. */
  carried?: Record<string, { hash: string; size: number }>
}

export const EMBEDDED: Embedded | undefined = undefined
