/**
 * The pool's worker for the pool's own tests: the product's worker (src/worker.ts) plus `probe`
 * tasks, which exercise the transport without any of tea's code. `echo` returns `value`, `sleep` resolves after
 * `ms`, `spin` busy-loops for `ms` (forever when omitted), `thread` returns the worker's thread id. A pool runs it
 * after `useProbeWorker()` (probe-pool.ts).
 */

import { threadId } from 'node:worker_threads'
import type { PoolTask, TaskReply, TaskResult } from '../../src/pool/protocol.ts'
import { dispatchTask } from '../../src/pool/worker.ts'
import { workerHandlers } from '../../src/worker.ts'

interface ProbeTask extends PoolTask {
  kind: 'probe'
  probe: 'echo' | 'spin' | 'sleep' | 'thread'
  ms?: number
  value?: unknown
}

const handlers = { ...workerHandlers, probe: (task: ProbeTask) => runProbeTask(task) }

export function runWorkerTask(task: PoolTask): Promise<TaskReply> {
  return dispatchTask(task, handlers)
}

async function runProbeTask(task: ProbeTask): Promise<TaskResult> {
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
