export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type State = Record<string, unknown>

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
  // Any realm's Object.prototype (objects returned by `run:` code come from a vm context) or none.
  const proto = Object.getPrototypeOf(v)
  return proto === null || Object.getPrototypeOf(proto) === null
}

/** `make`'s value, made at the first call and kept: for what a start should not build unless it is asked for. */
export function once<T>(make: () => T): () => T {
  let made = false
  let value: T
  return () => {
    if (!made) {
      value = make()
      made = true
    }
    return value
  }
}

/**
 * Milliseconds on a monotonic clock, for durations. `performance.now()` would do, but the `performance` global loads
 * ten of Node's modules at its first read, outside Node's code cache under the executables' V8 flags (issue 14).
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const t = setTimeout(done, ms)
    function done(): void {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }
    function onAbort(): void {
      clearTimeout(t)
      reject(signal!.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * The one backoff (node retries, model calls, plan subtasks, the router's redeliveries, agent.dispatch): the delay
 * before retry number `attempt` (0-based) is base·factor^attempt, at most `maxMs`; with `jitter` (the default) a
 * random delay in [half of that, that], so that many clients failing together do not come back together. A caller
 * whose delays a spec or a user fixes exactly (plan.execute's retry_delay × backoff_factor^n) turns jitter off.
 */
export function backoffDelay(
  attempt: number,
  baseMs: number,
  { factor = 2, maxMs = 30_000, jitter = true }: { factor?: number; maxMs?: number; jitter?: boolean } = {},
): number {
  const ceiling = Math.min(maxMs, baseMs * factor ** attempt)
  return jitter ? ceiling / 2 + Math.random() * (ceiling / 2) : ceiling
}

/** Levenshtein distance, for "did you mean" suggestions. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!
    prev[0] = i
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1))
      diag = tmp
    }
  }
  return prev[b.length]!
}

/** Up to `max` candidates close to `name`, nearest first. */
export function closest(name: string, candidates: Iterable<string>, max = 3): string[] {
  const scored: Array<[string, number]> = []
  for (const c of candidates) {
    const d = editDistance(name, c)
    const prefix = c.startsWith(name.split('.')[0] ?? name) ? -1 : 0
    if (d <= Math.max(2, Math.floor(c.length / 2))) scored.push([c, d + prefix])
  }
  return scored
    .sort((x, y) => x[1] - y[1] || x[0].localeCompare(y[0]))
    .slice(0, max)
    .map(([c]) => c)
}

/** Parses durations such as `30s`, `15m`, `2h`, `7d` into milliseconds. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?$/.exec(text.trim())
  if (!m) return undefined
  const unit = { ms: 1, s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 604800e3 }[m[2] ?? 's']!
  return Number(m[1]) * unit
}
