/**
 * Progress on stderr. On a terminal one live line is rewritten per node (and per subtask); otherwise one plain
 * line per finished node, which reads well in logs and CI. `-q` silences it, `--stream` replaces it.
 */

import type { RunEvent } from '../actions/types.ts'
import type { Io } from './io.ts'

export function progressPrinter(io: Io): (event: RunEvent) => void {
  let live = false
  const started = Date.now()
  const elapsed = (): string => `${((Date.now() - started) / 1000).toFixed(1)}s`
  const line = (text: string): void => {
    if (io.isTTY) {
      io.err(`\r\x1b[2K${text}`)
      live = true
    } else io.err(`${text}\n`)
  }
  const done = (text: string): void => {
    if (live) io.err('\r\x1b[2K')
    live = false
    io.err(`${text}\n`)
  }
  return (event) => {
    switch (event.type) {
      case 'start':
        io.err(`tea: ${event.resumed ? 'resuming' : 'running'} ${event.agent} (run ${event.runId})\n`)
        break
      case 'node_start':
        if (io.isTTY) line(`▸ ${event.node} (step ${event.step}, ${elapsed()})`)
        break
      case 'node_end':
        if (!io.isTTY) line(`✓ ${event.node} (${formatMs(event.ms)})`)
        break
      case 'subtask':
        line(`  subtask ${event.id}: ${event.status}${typeof event.progress === 'string' ? ` ${event.progress}` : ''}`)
        break
      case 'log':
        done(`  [${event.node}] ${event.message}`)
        break
      case 'interrupt':
        done(`⏸ paused ${event.when} node '${event.node}'`)
        break
      case 'error':
        done(`✗ ${event.node ?? 'run'}: ${String(event.error.message ?? '')}`)
        break
      case 'complete':
        done(`✓ completed in ${elapsed()}`)
        break
    }
  }
}

function formatMs(ms: number): string {
  return ms < 1 ? `${Math.round(ms * 1000)}µs` : ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`
}
