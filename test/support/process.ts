/** Process checks for tests that start programs which must not outlive them. */
import { readFileSync } from 'node:fs'

/** Whether `pid` has ended within 2 s: no such process, or a zombie waiting for a parent that is not ours to reap it. */
export async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0)
      if (/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) return true
    } catch {
      return true
    }
    await new Promise((r) => setTimeout(r, 20))
  }
  return false
}
