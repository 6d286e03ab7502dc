/** Exit codes (SPEC §3.1). */
export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 3, signal: 130 } as const
