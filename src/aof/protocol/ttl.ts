/**
 * The one range every AOF duration option is held to (lease TTL, heartbeat TTL, heartbeat interval): a whole
 * number of milliseconds from 1 ms to 30 days. Checked before any file is touched (issue 9, D7: `--ttl-ms 1e99`
 * passed the CLI's "positive integer" check, then `new Date(now + ttl)` threw a RangeError after the task had
 * moved). 30 days keeps every expiry far inside `Date`'s range (±8.64e15 ms) and ttl/3, the default heartbeat
 * interval, inside a Node timer's (2^31 − 1 ms; a longer delay fires at once). A bad value is USAGE: the caller
 * passed it, and the CLI exits 2 on it.
 */

import { TeaError } from '../../core/errors.ts'

export const MIN_TTL_MS = 1
export const MAX_TTL_MS = 30 * 24 * 60 * 60 * 1000

/** A Node timer's longest delay; `setInterval` with more fires at once, in a loop. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** `value` when it is a whole number of ms within [MIN_TTL_MS, MAX_TTL_MS]; USAGE naming `name` otherwise. */
export function checkTtlMs(name: string, value: number, max = MAX_TTL_MS): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= MIN_TTL_MS && value <= max) return value
  throw new TeaError(
    'USAGE',
    `${name} expects a whole number of milliseconds from ${MIN_TTL_MS} to ${max} (${describe(max)}), received ${String(value)}`,
    {
      details: { option: name, received: String(value), min: MIN_TTL_MS, max },
    },
  )
}

/** `value ?? fallback`, checked. */
export function ttlOption(name: string, value: number | undefined, fallback: number): number {
  return value === undefined ? fallback : checkTtlMs(name, value)
}

/** A timer interval: the TTL range, and no longer than a Node timer can wait. */
export function checkIntervalMs(name: string, value: number): number {
  return checkTtlMs(name, value, Math.min(MAX_TTL_MS, MAX_TIMER_MS))
}

function describe(ms: number): string {
  const days = ms / 86_400_000
  return Number.isInteger(days) ? `${days} days` : `${(days).toFixed(1)} days`
}
