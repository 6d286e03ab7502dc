/**
 * Small measuring helpers for the engine benchmark: medians, and "foreign load" — the CPU that other processes
 * used while we measured. The machine is shared (research/perf-anchors.md §1), so a round first waits briefly for
 * quiet and every phase records how busy the rest of the machine was, in cores.
 */

import { readFileSync } from 'node:fs'

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

export function range(xs: number[], digits = 1): string {
  return `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`
}

/** Busy and total jiffies of the whole host (/proc/stat's first line). */
function hostTicks(): { busy: number; total: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number)
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0)
  const total = cpu.reduce((a, b) => a + b, 0)
  return { busy: total - idle, total }
}

const TICK_MS = 10 // USER_HZ = 100 on Linux

/**
 * Starts a window; `stop(childCpuMs)` returns the cores used by other processes during it: host busy − our own
 * CPU − the CPU of our measuring children (which they report, since their CPU is not in process.cpuUsage()).
 */
export function foreignLoad(): { stop(childCpuMs?: number): number } {
  const h0 = hostTicks()
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  return {
    stop(childCpuMs = 0) {
      const h1 = hostTicks()
      const c = process.cpuUsage(c0)
      const wallMs = performance.now() - t0
      const hostBusyMs = (h1.busy - h0.busy) * TICK_MS
      const ownMs = (c.user + c.system) / 1000 + childCpuMs
      return Math.max(0, (hostBusyMs - ownMs) / wallMs)
    },
  }
}

/** Waits (up to `maxMs`) until other processes use less than 0.15 cores over a 250 ms window. */
export async function waitForQuiet(maxMs = 2500): Promise<number> {
  const deadline = performance.now() + maxMs
  let load = 0
  do {
    const w = foreignLoad()
    await new Promise((r) => setTimeout(r, 250))
    load = w.stop()
    if (load < 0.15) break
  } while (performance.now() < deadline)
  return load
}
