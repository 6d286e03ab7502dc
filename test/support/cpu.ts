/**
 * CPU time instead of wall time, for tests that bound how much work something does (a linear parse of hostile
 * input, a runaway loop stopped at its limit): the process's user + system time over all its threads, which other
 * processes on a busy machine (test files running side by side) do not stretch as they stretch the wall time.
 */

/** The CPU milliseconds this process spent while `fn` ran, with its result (or its rejection, rethrown). */
export async function cpuMs<T>(fn: () => T | Promise<T>): Promise<{ value: T; ms: number }> {
  const start = process.cpuUsage()
  const value = await fn()
  const used = process.cpuUsage(start)
  return { value, ms: (used.user + used.system) / 1000 }
}

/** `cpuMs` for synchronous work. */
export function cpuMsSync<T>(fn: () => T): { value: T; ms: number } {
  const start = process.cpuUsage()
  const value = fn()
  const used = process.cpuUsage(start)
  return { value, ms: (used.user + used.system) / 1000 }
}
