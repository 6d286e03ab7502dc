/**
 * What tinypool needs of an abort signal (an emitter with `once`/`off`), for a task's own time limit. A real
 * AbortController per task, with its EventTarget listeners, was a measurable share of a plan's dispatch cost at
 * thousands of subtasks a second.
 */
export interface AbortHandle {
  aborted: boolean
  once(event: 'abort', listener: () => void): void
  off(event: 'abort', listener: () => void): void
  abort(): void
}

export function abortHandle(): AbortHandle {
  let listener: (() => void) | undefined
  return {
    aborted: false,
    once(_event, l) {
      listener = l
    },
    off(_event, l) {
      if (listener === l) listener = undefined
    },
    abort() {
      if (this.aborted) return
      this.aborted = true
      const l = listener
      listener = undefined
      l?.()
    },
  }
}
