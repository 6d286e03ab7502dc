/**
 * A flag's text turned into its typed value, once, for every command: numbers checked against their range, words
 * against their set. What is refused gets one message naming the flag, what it expects (the range included) and
 * what arrived. Help prints the same range and default text (help.ts), so the two cannot disagree.
 *
 * The ranges, unless a flag narrows them (docs/cli.md lists them):
 * - `int`: 0 to 2^31−1.
 * - `ms`: 1 ms to 30 days, the range the AOF library holds its TTLs to (src/aof/ttl.ts): every expiry stays far
 *   inside `Date`'s range, and a third of it (the heartbeat interval) inside a Node timer's. A flag that is itself
 *   a timer's delay narrows it to 2^31−1 ms (about 24.9 days): Node fires a longer timer at once, so a longer
 *   `--interval-ms` would poll without pause.
 * - `duration`: 0 s to 3,650 days.
 */

import { MAX_TTL_MS } from '../aof/protocol/ttl.ts'
import { closest, parseDuration } from '../core/util.ts'
import type { EnumFlag, FlagDef, NumberFlag } from './command.ts'

const DAY = 86_400_000
const MAX_INT = 2 ** 31 - 1

/** The longest delay a Node timer takes (a longer one fires at once). */
export const MAX_TIMER_MS = MAX_INT

export const RANGES = {
  int: { min: 0, max: MAX_INT },
  ms: { min: 1, max: MAX_TTL_MS },
  duration: { min: 0, max: 3650 * DAY },
} as const satisfies Record<NumberFlag['type'], { min: number; max: number }>

export type Coerced = { ok: true; value: unknown } | { ok: false; message: string }

/** `raw` as the value of `--name` (a boolean or list flag never comes here: they have no single value to coerce). */
export function coerceFlag(name: string, def: FlagDef, raw: string): Coerced {
  switch (def.type) {
    case 'int':
    case 'ms':
    case 'duration':
      return coerceNumber(name, def, raw)
    case 'enum':
      return coerceEnum(name, def, raw)
    default:
      return { ok: true, value: raw }
  }
}

function coerceNumber(name: string, def: NumberFlag, raw: string): Coerced {
  const { min, max } = rangeOf(def)
  // Digits only: `1e3`, `0x10`, ` 5` and `-5` are refused rather than read as something the user did not write.
  const n = def.type === 'duration' ? parseDuration(raw) : /^\d+$/.test(raw) ? Number(raw) : undefined
  const value = n === undefined ? undefined : Math.round(n)
  if (value !== undefined && value >= min && value <= max) return { ok: true, value }
  return { ok: false, message: `--${name} expects ${expects(def)}, got ${JSON.stringify(raw)}` }
}

function coerceEnum(name: string, def: EnumFlag, raw: string): Coerced {
  if (def.values.includes(raw)) return { ok: true, value: raw }
  const near = closest(raw, def.values, 1)
  return {
    ok: false,
    message: `--${name} expects ${expects(def)}, got ${JSON.stringify(raw)}${near.length ? ` (did you mean ${near[0]}?)` : ''}`,
  }
}

export function rangeOf(def: NumberFlag): { min: number; max: number } {
  return { min: def.min ?? RANGES[def.type].min, max: def.max ?? RANGES[def.type].max }
}

/** What a flag accepts, as a phrase: `a whole number of milliseconds from 1 to 2592000000 (30d)`. */
export function expects(def: EnumFlag | NumberFlag): string {
  if (def.type === 'enum') return `one of ${def.values.join(', ')}`
  const { min, max } = rangeOf(def)
  if (def.type === 'int') return `a whole number from ${min} to ${max}`
  if (def.type === 'ms') return `a whole number of milliseconds from ${min} to ${max} (${formatMs(max)})`
  return `a duration such as 30m, 12h or 7d (a bare number is seconds) from ${formatMs(min)} to ${formatMs(max)}`
}

/** Milliseconds in the largest unit that keeps them ≥ 1, one decimal at most: `10m`, `2s`, `24.9d`, `0s`. */
export function formatMs(ms: number): string {
  const units: Array<[string, number]> = [
    ['d', DAY],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ]
  if (ms === 0) return '0s'
  for (const [unit, size] of units) if (ms >= size) return `${Math.round((ms / size) * 10) / 10}${unit}`
  return `${ms}ms`
}
