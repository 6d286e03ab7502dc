/**
 * SIGINT/SIGTERM for the commands that run agents: the first signal aborts the returned signal (the run stops
 * after its current checkpoint), a second one exits at once (130). `dispose` removes the handlers.
 */

import { cancelled } from '../core/signals.ts'
import { EXIT } from './exit.ts'
import type { Io } from './io.ts'

export interface StopSignal {
  signal: AbortSignal
  dispose(): void
}

export function stopOnSignals(io: Io, label: string, after = 'the current checkpoint'): StopSignal {
  const controller = new AbortController()
  let signals = 0
  const onSignal = (name: NodeJS.Signals): void => {
    if (++signals > 1) process.exit(EXIT.signal) // a second Ctrl-C means now
    io.err(`\n${label}: ${name}: stopping after ${after}…\n`)
    controller.abort(cancelled(name))
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    },
  }
}
