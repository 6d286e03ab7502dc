/**
 * Whether a recorded process still runs. `kill(pid, 0)` alone is not enough on a board: it succeeds on a zombie
 * (a killed process its parent has not reaped — seen in containers whose PID 1 does not reap), and after a reboot or
 * a long uptime the pid may belong to another program. On Linux the kernel's own record settles both:
 * `/proc/<pid>/stat` gives the state (`Z` zombie, `X` dead) and the start time in clock ticks since boot, which
 * together with the pid names one process for the life of the machine.
 */

import { readFileSync } from 'node:fs'

/** A process as recorded by the one that owns a run: its pid and, where the OS tells, its start time. */
export interface ProcessIdentity {
  pid: number
  /** Start time in clock ticks since boot (`/proc/<pid>/stat` field 22); absent where /proc is not mounted. */
  startTicks?: number
}

/** This process, as others will check for it. */
export function selfIdentity(): ProcessIdentity {
  const startTicks = procStat(process.pid)?.startTicks
  return startTicks === undefined ? { pid: process.pid } : { pid: process.pid, startTicks }
}

/**
 * True when the process is running: it exists (EPERM: it exists but belongs to another user), is not a zombie, and —
 * when a start time was recorded — started when the recorded one did (otherwise the pid was reused).
 */
export function processAlive(pid: number, startTicks?: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  const stat = procStat(pid)
  if (!stat) return true // no /proc: kill(0) is all we can know
  if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return false
  return startTicks === undefined || stat.startTicks === startTicks
}

function procStat(pid: number): { state: string; startTicks: number } | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // The command name (field 2) is in parentheses and may itself hold spaces or parentheses: split after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const state = fields[0]
  const startTicks = Number(fields[19])
  if (state === undefined || !Number.isFinite(startTicks)) return undefined
  return { state, startTicks }
}
