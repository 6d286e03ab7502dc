/**
 * The memory ceiling of JavaScript `run:` code (`settings.run_memory_mb`). The code runs in the tea process's own
 * V8 (a worker per node would cost a thread's start on every run), where nothing can stop an allocation once V8 has
 * begun it and a heap past V8's limit ends the process. So the ceiling is kept at the points where the code can be
 * stopped, before the process is at risk:
 *
 * - the loop guard (loop-guard.ts) calls `check` every 1,024 iterations (at most once a millisecond): the heap and
 *   the external memory (array buffers) the process holds beyond what it held at the first check, against the limit. A loop that grows a
 *   list, a string or a map is stopped within one round of 1,024 iterations past its limit;
 * - the built-ins that allocate in one call as much as their argument says — `Array`, `ArrayBuffer`,
 *   `SharedArrayBuffer`, the typed arrays, `Array.prototype.fill` / `concat`, `Array.from`, `String.prototype.repeat`
 *   / `padStart` / `padEnd` — refuse a single allocation over the limit before it is made, and measure as the loop
 *   guard does once those they allowed add up to a quarter of the limit; `WebAssembly` (whose memory grows by
 *   gigabytes a call) is not in the context at all;
 *
 * What is left is what JavaScript does not let a host see: one statement that doubles an array by spreading it, run
 * fewer than 1,024 times. docs/security.md says so: JavaScript `run:` code is the agent author's, not a sandbox.
 */

import { TeaError } from '../core/errors.ts'
import { builtin } from '../core/builtin.ts'
import type { Where } from '../core/issues.ts'

const MiB = 1024 * 1024

/**
 * What the context's allocating built-ins hold to: the running code's limit (0: none), its check, and the bytes
 * they allowed since that last ran. Code of one process shares the one context; of codes running at once (async
 * nodes of parallel branches) the last to start sets these.
 */
let current = 0
let currentCheck: (() => void) | undefined
let allowed = 0

/** What the process holds: V8's heap in use plus the memory it holds outside it (array buffers). */
function held(): number {
  const s = builtin('node:v8').getHeapStatistics()
  return s.used_heap_size + s.external_memory
}

/**
 * A check for code that may take `limitMb` MiB from now; undefined when there is no limit. Sets the limit the
 * context's built-ins refuse single allocations over.
 */
export function memoryCheck(limitMb: number | undefined, where: Where | undefined): (() => void) | undefined {
  allowed = 0
  if (limitMb === undefined || !(limitMb > 0)) {
    current = 0
    currentCheck = undefined
    return undefined
  }
  const limit = limitMb * MiB
  // The base is read at the first check, not here: most code never loops 1,024 times nor allocates much, and a
  // node's start then costs nothing (not even loading node:v8). What comes before that first check is at most one
  // round of the loop guard or a quarter of the limit in allocations (each one checked against the limit alone).
  let base: number | undefined
  const check = (): void => {
    const now = held()
    base ??= now
    const grown = now - base
    if (grown > limit) throw overLimit(limitMb, where, grown)
  }
  current = limit
  currentCheck = check
  return check
}

function overLimit(limitMb: number, where: Where | undefined, bytes?: number): TeaError {
  const took = bytes === undefined ? '' : ` (it held ${Math.round(bytes / MiB)} MiB)`
  return new TeaError('NODE_MEMORY_LIMIT', `run: code went over its memory limit of ${limitMb} MiB${took} and was stopped`, {
    where,
    details: { limitMb },
    hint: 'a list or string that grows without end, or data larger than the board should hold: raise settings.run_memory_mb if it is meant',
  })
}

/** Called by the context's wrapped built-ins (installed by `CONTEXT_LIMITS`) before a large allocation. */
export function refuseOver(bytes: number): void {
  if (current === 0) return
  if (bytes > current) throw overLimit(Math.round(current / MiB), undefined, bytes)
  // Many allocations under the limit each (a loop of them) add up: measure once they could have.
  allowed += bytes
  if (allowed > current / 4) {
    allowed = 0
    currentCheck?.()
  }
}

/**
 * Run once in the `run:` context when it is made: wraps the built-ins that allocate what their arguments say so
 * they ask `__refuse(bytes)` first, and removes WebAssembly. The wrappers stand in for the originals everywhere
 * code can reach them (the global, and each prototype's `constructor`).
 */
export const CONTEXT_LIMITS = `(() => {
  const refuse = __refuse
  delete globalThis.__refuse
  delete globalThis.WebAssembly
  const sizeOf = (n, per) => (typeof n === 'number' ? n * per : 0)
  const wrap = (name, per) => {
    const C = globalThis[name]
    if (typeof C !== 'function') return
    const W = new Proxy(C, {
      construct(target, args, newTarget) {
        const [a, b] = args
        if (per === 0) refuse(Math.max(sizeOf(a, 1), b && typeof b === 'object' ? sizeOf(b.maxByteLength, 1) : 0))
        else refuse(sizeOf(a, per))
        return Reflect.construct(target, args, newTarget === W ? target : newTarget)
      },
    })
    Object.defineProperty(globalThis, name, { value: W, writable: true, configurable: true, enumerable: false })
    Object.defineProperty(C.prototype, 'constructor', { value: W, writable: true, configurable: true, enumerable: false })
  }
  wrap('Array', 8)
  wrap('ArrayBuffer', 0)
  wrap('SharedArrayBuffer', 0)
  for (const [name, per] of [['Int8Array', 1], ['Uint8Array', 1], ['Uint8ClampedArray', 1], ['Int16Array', 2], ['Uint16Array', 2],
    ['Int32Array', 4], ['Uint32Array', 4], ['Float32Array', 4], ['Float64Array', 8], ['BigInt64Array', 8], ['BigUint64Array', 8],
    ['Float16Array', 2]]) wrap(name, per)
  const guard = (proto, name, bytes) => {
    const f = proto[name]
    if (typeof f !== 'function') return
    Object.defineProperty(proto, name, {
      value: { [name](...args) { refuse(bytes(this, args)); return Reflect.apply(f, this, args) } }[name],
      writable: true, configurable: true, enumerable: false,
    })
  }
  const len = (v) => (v != null && typeof v.length === 'number' ? v.length : 0)
  guard(Array.prototype, 'fill', (self) => len(self) * 8)
  guard(String.prototype, 'repeat', (self, [n]) => String(self).length * (Number(n) || 0) * 2)
  guard(String.prototype, 'padStart', (_, [n]) => (Number(n) || 0) * 2)
  guard(String.prototype, 'padEnd', (_, [n]) => (Number(n) || 0) * 2)
  guard(Array, 'from', (_, [src]) => len(src) * 8)
  guard(Array.prototype, 'concat', (self, args) => args.reduce((n, a) => n + len(a), len(self)) * 8)
})()`
