/**
 * Ollama's `keep_alive`: how long a model stays loaded after a request. A number is seconds; a string is a number
 * with a unit (`ms`, `s`, `m`, `h`; no unit means seconds); a negative value keeps the model loaded for good.
 */

/** Milliseconds, -1 for "for good", undefined for a value Ollama would not read either. */
export function keepAliveMs(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? (value < 0 ? -1 : value * 1000) : undefined
  const m = /^(-?\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(String(value).trim())
  if (!m) return undefined
  const n = Number(m[1])
  if (n < 0) return -1
  return n * UNIT_MS[(m[2] ?? 's') as keyof typeof UNIT_MS]
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }
