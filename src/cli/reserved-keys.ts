/**
 * Keys that name an object's own machinery rather than data: `__proto__` set on a plain object replaces its
 * prototype (and the entry vanishes), and `constructor`/`prototype` shadow what code reads off every object. The
 * CLI builds objects from user-given keys (`--set`, `--meta`) and refuses these loudly instead of dropping or
 * misplacing them in silence.
 */
export const RESERVED_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype']

export function isReservedKey(key: string): boolean {
  return RESERVED_KEYS.includes(key)
}
