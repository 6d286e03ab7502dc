/**
 * Which top-level keys of `state` a piece of `run:` code changed. Before the code runs, each top-level value is
 * remembered as itself (primitives) or as its JSON (objects); afterwards the two are compared. That is O(state),
 * the same order as the structured clone that brought the state into the worker, and unlike a Proxy it costs
 * nothing per property read, so a hot loop over `state.x` runs at full speed.
 */

export interface StateTracker {
  state: Record<string, unknown>
  changes(): { updates: Record<string, unknown>; removed: string[] }
}

export function trackTopLevel(state: Record<string, unknown>): StateTracker {
  const before = new Map<string, unknown>()
  for (const [k, v] of Object.entries(state)) before.set(k, fingerprint(v))
  return {
    state,
    changes() {
      const updates: Record<string, unknown> = {}
      const removed: string[] = []
      for (const [k, v] of Object.entries(state)) if (!before.has(k) || before.get(k) !== fingerprint(v)) updates[k] = v
      for (const k of before.keys()) if (!Object.hasOwn(state, k)) removed.push(k)
      return { updates, removed }
    },
  }
}

const OBJECT = Symbol('unfingerprintable')

function fingerprint(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v
  try {
    return `json:${JSON.stringify(v)}`
  } catch {
    // cyclic or BigInt-holding values: treat as changed only when replaced
    return v ?? OBJECT
  }
}
