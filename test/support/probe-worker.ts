/**
 * Probe tasks, for the pool's own tests and benchmarks: they exercise the transport without any of tea's code.
 * `echo` returns `value`, `sleep` resolves after `ms`, `spin` busy-loops for `ms` (forever when omitted), `thread`
 * returns the worker's thread id.
 */

import { threadId } from 'node:worker_threads'
import type { PoolTask, TaskResult } from './protocol.ts'

export interface ProbeTask extends PoolTask {
  kind: 'probe'
  probe: 'echo' | 'spin' | 'sleep' | 'thread'
  ms?: number
  value?: unknown
}

export async function runProbeTask(task: ProbeTask): Promise<TaskResult> {
  const { probe, ms = 0, value = null } = task
  if (probe === 'thread') return { value: threadId }
  if (probe === 'sleep') await new Promise((r) => setTimeout(r, ms))
  if (probe === 'spin') {
    const until = ms > 0 ? Date.now() + ms : Infinity
    let x = 0
    while (Date.now() < until) x++
    return { value: x }
  }
  return { value }
}
