/**
 * YAML text → plain data, keeping a way back from a data path (`['nodes', 2, 'goto']`) to the line and column it
 * came from, so every later check can report `file:line:col`. This is the only module that imports `yaml`
 * (besides src/aof/frontmatter.ts, which handles AOF task files).
 */

import { isMap, LineCounter, parseDocument, type Document } from 'yaml'

export interface Position {
  line: number
  col: number
}

export interface Parsed {
  data: unknown
  /** Syntax problems; `data` is unusable when this is non-empty. */
  errors: Array<{ message: string; pos: Position }>
  /** Position of the value at `path` (or of its key when `key` is set), else of the nearest ancestor found. */
  locate(path: ReadonlyArray<string | number>, key?: boolean): Position
  /** Position of a character offset. */
  at(offset: number): Position
}

export function parseYaml(text: string): Parsed {
  const lineCounter = new LineCounter()
  // logLevel 'error': yaml's warnings (e.g. a collection used as a key) would go to the process's stderr; such a
  // key becomes a string here and is then reported as an unknown key with its position.
  const doc: Document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, logLevel: 'error' })
  const at = (offset: number): Position => {
    const p = lineCounter.linePos(offset)
    return { line: p.line, col: p.col }
  }
  const errors = doc.errors.map((e) => ({ message: authorMessage(e.message.split('\n')[0]!), pos: at(e.pos[0]) }))
  const locate = (path: ReadonlyArray<string | number>, key = false): Position => {
    for (let n = path.length; n >= 0; n--) {
      const sub = path.slice(0, n)
      if (key && n === path.length && n > 0) {
        const parent = sub.length === 1 ? doc.contents : doc.getIn(sub.slice(0, -1), true)
        if (isMap(parent)) {
          const pair = parent.items.find((p) => (p.key as { value?: unknown } | null)?.value === sub[sub.length - 1])
          const range = (pair?.key as { range?: [number, number, number] } | null)?.range
          if (range) return at(range[0])
        }
        continue
      }
      const node = n === 0 ? doc.contents : doc.getIn(sub, true)
      const range = (node as { range?: [number, number, number] } | null)?.range
      if (range) return at(range[0])
    }
    return { line: 1, col: 1 }
  }
  let data: unknown
  if (!errors.length) {
    try {
      data = doc.toJS({ maxAliasCount: 100 })
    } catch (e) {
      // Unresolvable aliases and alias bombs surface only when converting.
      errors.push({ message: (e as Error).message, pos: { line: 1, col: 1 } })
    }
  }
  return { data, errors, locate, at }
}

/** Parses YAML or JSON text that is not an agent (e.g. `-i @input.yaml`). Throws with the first problem. */
export function parseYamlValue(text: string): unknown {
  const doc = parseDocument(text, { prettyErrors: false, logLevel: 'error' })
  if (doc.errors.length) throw new Error(doc.errors[0]!.message.split('\n')[0])
  return doc.toJS({ maxAliasCount: 100 })
}

/** The `yaml` package's messages, reworded where they speak to its API rather than to the file's author. */
function authorMessage(message: string): string {
  if (/multiple documents/i.test(message)) {
    return "the file holds more than one YAML document (a second '---' line): an agent file is one document (TEA refuses such files too); split it, or remove the extra '---'"
  }
  return message
}
