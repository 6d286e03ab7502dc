/**
 * Processes for the fleet end-to-end test (fleet.test.ts): `tea worker` and `tea aof poll` from the built bundle,
 * their stdout lines and stderr kept, with a way to wait for a line on either stream (an event, never a sleep).
 */

import type { ChildProcess } from 'node:child_process'
import { type Result, spawnTea, tea } from './cli.ts'

export interface Proc {
  child: ChildProcess
  /** Complete stdout lines so far. */
  lines: string[]
  stderr(): string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Resolves with the first stderr text that matches, or rejects if the process ends first. */
  waitErr(pattern: RegExp): Promise<RegExpMatchArray>
}

export function start(args: string[]): Proc {
  const child = spawnTea(args)
  child.stdin!.end()
  const lines: string[] = []
  let out = ''
  let err = ''
  const waiters: Array<() => void> = []
  const wake = () => {
    for (const w of waiters.splice(0)) w()
  }
  child.stdout!.on('data', (b: Buffer) => {
    out += b.toString()
    const parts = out.split('\n')
    out = parts.pop()!
    lines.push(...parts.filter(Boolean))
    wake()
  })
  child.stderr!.on('data', (b: Buffer) => {
    err += b.toString()
    wake()
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('close', (code, signal) => {
      wake()
      r({ code, signal })
    }),
  )
  const waitErr = async (pattern: RegExp): Promise<RegExpMatchArray> => {
    for (;;) {
      const m = err.match(pattern)
      if (m) return m
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`tea ${args[0]} ended before ${pattern}:\n${err}`)
      await new Promise<void>((r) => waiters.push(r))
    }
  }
  return { child, lines, stderr: () => err, exited, waitErr }
}

/** Ends a process that is still running (SIGKILL) and waits for it; used in `finally`. */
export async function end(p: Proc): Promise<void> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL')
  await p.exited
}

export interface WorkerLine {
  taskId: string
  runId: string
  outcome: string
  status?: string
  reason?: string
}

export const workerLines = (p: Proc): WorkerLine[] => p.lines.map((l) => JSON.parse(l) as WorkerLine)

/** `tea aof poll` every `everyMs` until stopped; the outputs of the polls that reached the store. */
export function scheduler(storeArgs: string[], everyMs: number) {
  let on = true
  const polls: Array<{ actions: Array<{ taskId: string; resolution?: string; type: string }> }> = []
  let failed = 0
  const loop = (async () => {
    while (on) {
      const r: Result = await tea(['aof', 'poll', ...storeArgs], { timeoutMs: 60_000 })
      // A poll while the server is away fails with one line and exit 1; the next one goes on.
      if (r.code === 0) polls.push(JSON.parse(r.stdout))
      else failed++
      if (on) await new Promise((r) => setTimeout(r, everyMs))
    }
  })()
  return {
    polls,
    failed: () => failed,
    async stop(): Promise<void> {
      on = false
      await loop
    },
  }
}
