/**
 * One attempt's AbortSignal: fires when the per-attempt timeout elapses or when the caller's signal (SIGINT, a
 * stopped run) fires, and remembers which, because fetch reports both as the same AbortError. `dispose` fires it
 * too, once the attempt is over, so a reply the attempt stopped reading part-way (it broke a cap, or the client
 * library left its stream unread on an error) does not keep its connection open.
 */

export interface AttemptSignal {
  signal: AbortSignal
  timedOut(): boolean
  aborted(): boolean
  dispose(): void
}

export function attemptSignal(timeoutMs: number, outer?: AbortSignal): AttemptSignal {
  const controller = new AbortController()
  let fired: 'timeout' | 'outer' | undefined
  const onOuter = (): void => {
    fired ??= 'outer'
    controller.abort(outer?.reason)
  }
  const timer = setTimeout(() => {
    fired ??= 'timeout'
    controller.abort(new Error(`timed out after ${timeoutMs} ms`))
  }, timeoutMs)
  if (outer?.aborted) onOuter()
  else outer?.addEventListener('abort', onOuter, { once: true })
  return {
    signal: controller.signal,
    timedOut: () => fired === 'timeout',
    aborted: () => fired === 'outer',
    dispose: () => {
      clearTimeout(timer)
      outer?.removeEventListener('abort', onOuter)
      controller.abort(new Error('the attempt is over'))
    },
  }
}
