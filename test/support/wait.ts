/**
 * Waiting for an event instead of sleeping a fixed time: a fixed sleep is either too long (the suite's time) or,
 * on a busy machine running test files side by side, too short (a flake). `waitFor` polls `ready` until it holds
 * and fails, naming `what`, when it has not by the deadline.
 */

/** Resolves once `ready()` returns true (polled every `everyMs`); rejects naming `what` after `timeoutMs`. */
export async function waitFor(
  ready: () => boolean | Promise<boolean>,
  what: string,
  { timeoutMs = 10_000, everyMs = 10 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await ready()) return
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}
