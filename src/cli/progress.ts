/**
 * Progress on stderr. On a terminal one live line shows the node running and how long it has taken, refreshed
 * twice a second so a slow model call visibly moves; otherwise one plain line per finished node, which reads well
 * in logs and CI. `-q` silences it, `--stream` replaces it.
 */

import { errorMessage } from '../core/errors.ts'
import type { RunEvent } from '../core/events.ts'
import type { Io } from './io.ts'

export function progressPrinter(io: Io): (event: RunEvent) => void {
  const started = Date.now()
  let live: (() => string) | undefined
  let ticker: NodeJS.Timeout | undefined
  const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)}s`
  const draw = (): void => {
    if (live) io.err(`\r\x1b[2K${live()}`)
  }
  const setLive = (text: () => string): void => {
    live = text
    draw()
    if (!ticker) {
      ticker = setInterval(draw, 500)
      ticker.unref() // never keeps the process alive
    }
  }
  const print = (text: string): void => {
    if (live) io.err('\r\x1b[2K')
    io.err(`${text}\n`)
    draw()
  }
  const finish = (text: string): void => {
    clearInterval(ticker)
    ticker = undefined
    if (live) io.err('\r\x1b[2K')
    live = undefined
    io.err(`${text}\n`)
  }
  return (event) => {
    switch (event.type) {
      case 'start':
        io.err(`tea: ${event.resumed ? 'resuming' : 'running'} ${event.agent} (run ${event.runId})\n`)
        break
      case 'node_start':
        if (io.isTTY) {
          const since = Date.now()
          setLive(() => `▸ ${event.node} · step ${event.step} · ${seconds(since)} (run ${seconds(started)})`)
        }
        break
      case 'node_end':
        if (!io.isTTY) io.err(`✓ ${event.node} (${formatMs(event.ms)})\n`)
        break
      case 'subtask': {
        const p = planProgress(event.progress)
        if (!io.isTTY) io.err(`  subtask ${event.id}: ${event.status}${p ? ` (${p.done}/${p.total})` : ''}\n`)
        else if (p) {
          const since = Date.now()
          setLive(
            () =>
              `▸ ${event.node ?? 'plan'} ${bar(p.done, p.total)} ${p.done}/${p.total}${p.failed ? ` · ${p.failed} failed` : ''} · ${event.id} ${event.status} · ${seconds(since)}`,
          )
        }
        break
      }
      case 'log':
        print(`  [${event.node}] ${event.message}`)
        break
      case 'reasoning': {
        // A reasoning step: `research · react_step 3 · web.scrape`.
        const e = event.entry
        const line = `${event.node} · ${String(e.step)} ${String(e.index)}${typeof e.action === 'string' && e.action ? ` · ${e.action}` : ''}`
        if (!io.isTTY) io.err(`  ${line}\n`)
        else {
          const since = Date.now()
          setLive(() => `▸ ${line} · ${seconds(since)} (run ${seconds(started)})`)
        }
        break
      }
      case 'interrupt':
        finish(`⏸ paused ${event.when} node '${event.node}'`)
        break
      case 'error':
        finish(`✗ ${event.node ?? 'run'}: ${errorMessage(event.error)}`)
        break
      case 'complete':
        finish(`✓ completed in ${seconds(started)}`)
        break
    }
  }
}

/** Counts from a subtask event's `progress` ({completed, failed, skipped, total, …}). */
function planProgress(value: unknown): { done: number; failed: number; total: number } | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const p = value as Record<string, unknown>
  const n = (k: string): number => (typeof p[k] === 'number' ? (p[k] as number) : 0)
  if (!n('total')) return undefined
  return { done: n('completed') + n('failed') + n('skipped'), failed: n('failed'), total: n('total') }
}

function bar(done: number, total: number, width = 20): string {
  const full = Math.round((done / total) * width)
  return `[${'█'.repeat(full)}${'░'.repeat(width - full)}]`
}

function formatMs(ms: number): string {
  return ms < 1 ? `${Math.round(ms * 1000)}µs` : ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`
}
