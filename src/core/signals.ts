/**
 * Control flow that is not failure (STYLE 8). These are thrown through the engine to unwind it, and retry
 * logic, `on_error` handling and action code must let them pass: use `isControlSignal` before treating a throw as
 * an error.
 */

export type SignalKind = 'interrupt' | 'cancel'

export class ControlSignal extends Error {
  override readonly name = 'ControlSignal'
  constructor(
    readonly kind: SignalKind,
    message: string,
  ) {
    super(message)
  }
}

export function isControlSignal(e: unknown, kind?: SignalKind): e is ControlSignal {
  if (typeof e !== 'object' || e === null) return false
  const s = e as { name?: unknown; kind?: unknown }
  return s.name === 'ControlSignal' && (kind === undefined || s.kind === kind)
}

/** Thrown by anything that notices its AbortSignal fired (SIGINT/SIGTERM, or a run being stopped). */
export function cancelled(reason = 'cancelled'): ControlSignal {
  return new ControlSignal('cancel', reason)
}
