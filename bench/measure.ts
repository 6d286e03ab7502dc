/** Small measuring helpers shared by the engine benchmarks (bench/lua-engines.ts, bench/prolog-engines.ts). */
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** Bytes of a file, or of every file under a directory. */
export function dirBytes(path: string): number {
  const st = statSync(path)
  if (!st.isDirectory()) return st.size
  return readdirSync(path).reduce((sum, name) => sum + dirBytes(join(path, name)), 0)
}
