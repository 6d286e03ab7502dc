/**
 * The YAML parse of an agent file, kept for the next start of the same text. A board starts the same agent from a
 * timer or a script again and again, and parsing YAML with positions is the largest part of loading it: 4–6 ms of
 * a 3-node `tea run`'s start, 40–120 ms and up to 6 MiB of peak memory for a 200-node file, in code that V8 meets
 * cold in every process (bench/RESULTS.md, issue 14). The data is kept as JSON, which V8 reads natively.
 *
 * One file per text, named by its SHA-256 (the hash `tea resume` already compares), in a folder per build of the
 * program: what `parseYaml` returns can change between builds, and a folder is never read by another build. The
 * file holds the data as parsed (before `${VAR}`s are expanded and TEA's node kinds lowered: those depend on the
 * environment and change the data in place) and the positions the load asked for (`locate`), so that line numbers
 * come out the same. A position it did not record — a later error, `tea validate` on an edited environment — is
 * found by parsing the text after all. A text is kept only when its data comes back from JSON exactly: no syntax
 * errors, no `.inf`/`.nan`/`-0`, no value reached twice (an alias: lowering changes the data in place, and a copy
 * would not share the change), nothing but plain objects, arrays, strings, finite numbers, booleans and null.
 *
 * Writes are best effort (a read-only or full cache dir only means the next start parses again) and atomic (a
 * rename), so two starts at once never read half a file; the folder keeps the newest KEEP files.
 */

import { readFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { isProgramId } from '../core/build-info.ts'
import { keepNewest, writeKept } from '../core/cache-files.ts'
import { isPlainObject } from '../core/util.ts'
import { parseYaml, type Parsed, type Position } from './parse.ts'

/** A parse, and (after a miss whose data can be kept) a way to keep it once the load has asked its positions. */
export interface AgentParse extends Parsed {
  keep?: () => void
}

/** Files kept per build: the agents a board runs are few; an edited file is a new text. */
const KEEP = 64

/** Builds whose folders are kept (the running one and the ones before it, as the code cache keeps its builds). */
const KEEP_BUILDS = 4

/** `dir` is this build's folder (`<cache>/agents/<program>`); without one, the text is parsed as it is. */
export function parseAgentYaml(text: string, hash: string, dir?: string): AgentParse {
  if (!dir) return parseYaml(text)
  const file = join(dir, `${hash}.json`)
  const kept = read(file)
  if (kept) return fromKept(text, kept)
  const parsed = parseYaml(text)
  if (parsed.errors.length || !plainData(parsed.data)) return parsed
  const data = JSON.stringify(parsed.data)
  const marks = new Map<string, Position>()
  return {
    ...parsed,
    locate(path, key = false) {
      const at = parsed.locate(path, key)
      marks.set(markKey(path, key), at)
      return at
    },
    keep: () => write(file, `{"marks":${JSON.stringify([...marks])},"data":${data}}`),
  }
}

// --- internal ---

interface Kept {
  marks: Array<[string, Position]>
  data: unknown
}

function read(file: string): Kept | undefined {
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as Kept
    // Only a file that loaded is kept, and an agent file is a mapping: anything else is not a file this wrote.
    return Array.isArray(kept.marks) && isPlainObject(kept.data) ? kept : undefined
  } catch {
    return undefined // absent, or not JSON (a file cut short)
  }
}

function fromKept(text: string, kept: Kept): Parsed {
  const marks = new Map(kept.marks)
  let parsed: Parsed | undefined
  const real = (): Parsed => (parsed ??= parseYaml(text))
  return {
    data: kept.data,
    errors: [],
    locate: (path, key = false) => marks.get(markKey(path, key)) ?? real().locate(path, key),
    at: (offset) => real().at(offset),
  }
}

function markKey(path: ReadonlyArray<string | number>, key: boolean): string {
  return `${key ? 'k' : 'v'}${JSON.stringify(path)}`
}

/** Whether JSON gives `data` back exactly (see the head of this file). */
function plainData(data: unknown, seen = new Set<object>()): boolean {
  if (data === null || typeof data === 'string' || typeof data === 'boolean') return true
  if (typeof data === 'number') return Number.isFinite(data) && !Object.is(data, -0)
  if (typeof data !== 'object' || seen.has(data)) return false
  seen.add(data)
  if (Array.isArray(data)) return data.every((item) => plainData(item, seen))
  if (Object.getPrototypeOf(data) !== Object.prototype) return false
  for (const value of Object.values(data)) if (!plainData(value, seen)) return false
  return true
}

/** A kept parse's file: the text's SHA-256. */
const PARSE_FILE = /^[0-9a-f]{64}\.json$/

function write(file: string, json: string): void {
  const dir = dirname(file)
  writeKept(file, json, () => {
    keepNewest(dir, KEEP, (name) => PARSE_FILE.test(name))
    // Earlier builds' folders beside this one, when this one is a build's (the CLI's layout: <cache>/agents/<build>).
    if (isProgramId(basename(dir))) keepNewest(dirname(dir), KEEP_BUILDS, isProgramId)
  })
}
