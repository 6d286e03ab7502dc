/**
 * The `run:` bodies (and other code) of TEA's agent files in `../shared/tea-corpus/`, for the engine benchmarks
 * (bench/lua-engines.ts, bench/prolog-engines.ts).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import YAML from 'yaml'

export const CORPUS = join(import.meta.dirname, '..', '..', 'shared', 'tea-corpus')

export interface Located {
  file: string
  /** The path inside the file, as /nodes/3. */
  where: string
}

export const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x)

/**
 * Every mapping of every corpus file, in order, given to `visit` with where it is; the bodies it returns are
 * collected. Files the yaml package cannot read are listed apart.
 */
export function corpusBodies<T>(visit: (x: Record<string, unknown>, at: Located) => T[]): {
  bodies: Array<T & Located>
  unreadable: string[]
} {
  const manifest = JSON.parse(readFileSync(join(CORPUS, 'manifest.json'), 'utf8')) as { files: Array<{ file: string }> }
  const bodies: Array<T & Located> = []
  const unreadable: string[] = []
  for (const { file } of manifest.files) {
    let doc: unknown
    try {
      doc = YAML.parse(readFileSync(join(CORPUS, file), 'utf8'))
    } catch {
      unreadable.push(file)
      continue
    }
    const walk = (x: unknown, where: string): void => {
      if (Array.isArray(x)) return x.forEach((y, i) => walk(y, `${where}/${i}`))
      if (!isObject(x)) return
      for (const body of visit(x, { file, where })) bodies.push({ ...body, file, where: (body as Partial<Located>).where ?? where })
      for (const [k, v] of Object.entries(x)) walk(v, `${where}/${k}`)
    }
    walk(doc, '')
  }
  return { bodies, unreadable }
}

/** A node's `run:` code in `language`, by TEA's three explicit markers: `run: {type, code}`, `language:`, and a
 * first-line comment (`marker`, e.g. /^--\s*lua\b/i). */
export function runIn(n: Record<string, unknown>, language: string, marker: RegExp): string | undefined {
  if (isObject(n.run) && n.run.type === language && typeof n.run.code === 'string') return n.run.code
  const code = typeof n.run === 'string' ? n.run : typeof n.script === 'string' ? n.script : undefined
  if (code === undefined) return undefined
  if (n.language === language) return code
  if (n.language === undefined && marker.test(code.trimStart())) return code
  return undefined
}
