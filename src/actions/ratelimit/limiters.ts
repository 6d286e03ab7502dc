/**
 * TEA's named rate limiters (ratelimit_actions.py): a limiter is a least interval between the calls that pass it,
 * shared by every node of the process that names it, the first configuration winning (`settings.rate_limiters`
 * first). A call takes the next free slot — the later of now and the last slot plus the interval — and waits for
 * it; taken in the event loop's single thread, the slots of parallel branches never collide.
 */

export interface Limiter {
  readonly intervalMs: number
  /** The time of the last slot given out. */
  last: number
}

/** The interval TEA derives: rps wins over rpm; neither, one call a second. */
export function intervalMs(rpm: number | undefined, rps: number | undefined): number {
  if (rps !== undefined && rps > 0) return 1000 / rps
  if (rpm !== undefined && rpm > 0) return 60_000 / rpm
  return 1000
}

/** The process's limiters by name. Made on first use, not at import (no module-scope state is built on load). */
let limiters: Map<string, Limiter> | undefined

/**
 * Past this many names (a limiter's name is a template, so a daemon's runs can make any number), the idle ones are
 * forgotten: an idle limiter (its next slot already passed) makes no caller wait, as a new one would not.
 */
const MAX_LIMITERS = 1_000

/** The limiter `name`, made with `interval` if it is new (an existing one keeps its own: first configuration wins). */
export function limiter(name: string, interval: number, now: number): Limiter {
  limiters ??= new Map()
  let l = limiters.get(name)
  if (!l) {
    if (limiters.size >= MAX_LIMITERS) for (const [n, x] of limiters) if (x.last + x.intervalMs <= now) limiters.delete(n)
    limiters.set(name, (l = { intervalMs: interval, last: Number.NEGATIVE_INFINITY }))
  }
  return l
}

/** How many limiters the process holds (for tests). */
export const limiterCount = (): number => limiters?.size ?? 0

/**
 * Reserves the limiter's next slot and says how long to wait for it, or, when that is longer than `timeoutMs`,
 * reserves nothing and says how long it would have been.
 */
export function reserve(l: Limiter, now: number, timeoutMs?: number): { waitMs: number; reserved: boolean } {
  const slot = Math.max(now, l.last + l.intervalMs)
  const waitMs = slot - now
  if (timeoutMs !== undefined && waitMs > timeoutMs) return { waitMs, reserved: false }
  l.last = slot
  return { waitMs, reserved: true }
}
