/**
 * `__proto__` as a plain key through msgpackr. msgpackr's decoder renames a map key `__proto__` to `__proto_` (so
 * decoding can never set a prototype), which silently changed state that held such a key — from a model's JSON,
 * say — across a checkpoint. Records are escaped on the way in and restored on the way out: a key
 * `__proto__` followed by n NUL characters is written with n+1 of them, and read back with one less, so every key
 * comes back as it was and none reaches the decoder as `__proto__`. The walk copies only the objects that hold
 * such a key; anything else is returned as it is.
 */

const PROTO = /^__proto__\u0000*$/

/** `value` with every own key matching `__proto__\0*` given one more NUL (copying only the objects that change). */
export function escapeProtoKeys(value: unknown): unknown {
  return walk(value, (k) => `${k}\u0000`)
}

/** The inverse of `escapeProtoKeys`: one NUL fewer, so `__proto__\0` is `__proto__` again (an own, plain key). */
export function restoreProtoKeys(value: unknown): unknown {
  return walk(value, (k) => k.slice(0, -1), true)
}

function walk(value: unknown, rename: (key: string) => string, restoring = false): unknown {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value
  if (Array.isArray(value)) {
    let out: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const next = walk(value[i], rename, restoring)
      if (next !== value[i]) (out ??= value.slice())[i] = next
    }
    return out ?? value
  }
  // Plain objects of any realm (run: code's come from its vm context); class instances are left to the encoder.
  const proto = Object.getPrototypeOf(value)
  if (proto !== null && Object.getPrototypeOf(proto) !== null) return value
  let out: Record<string, unknown> | undefined
  const source = value as Record<string, unknown>
  for (const key of Object.keys(source)) {
    const child = source[key]
    const next = walk(child, rename, restoring)
    const matches = restoring ? key.length > 9 && PROTO.test(key) : PROTO.test(key)
    if (!out && !matches && next === child) continue
    out ??= copyUpTo(source, key)
    define(out, matches ? rename(key) : key, next)
  }
  if (!out) return value
  return out
}

/** A copy of `source` with its keys before `stop` (the walk then adds `stop` and the keys after it). */
function copyUpTo(source: Record<string, unknown>, stop: string): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(source)) {
    if (key === stop) break
    define(out, key, source[key])
  }
  return out
}

function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}
