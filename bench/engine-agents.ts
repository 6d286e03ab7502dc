/**
 * The linear agents the engine benchmark runs, and the one bench action they use. Every node makes a one-key
 * update, so per-node cost is the engine's own (prepare → run → merge → checkpoint → route), not the action's.
 *
 * - `action`: `uses: bench.set` with static params — validated once at load, so a node is a call and a merge.
 * - `template`: the same with one template param, `"{{ state.i }}"`, rendered and validated on every node.
 * - `run`: a `run:` body returning `{ i: state.i + 1 }` (a vm-compiled function with the loop guard).
 * - `transform`: the core `json.transform` with a static `pick` (a real built-in, for reference).
 */

import * as v from 'valibot'
import { builtinActions } from '../src/actions/builtins.ts'
import { createRegistry, type Registry } from '../src/actions/registry.ts'
import { defineAction } from '../src/actions/types.ts'

export const KINDS = ['action', 'template', 'run', 'transform'] as const
export type Kind = (typeof KINDS)[number]

export const KIND_LABELS: Record<Kind, string> = {
  action: 'action node, no template (`bench.set`, static `with`)',
  template: 'action node, one template (`v: "{{ state.i }}"`)',
  run: '`run:` node (`return { i: state.i + 1 }`)',
  transform: 'core `json.transform` (static `pick`)',
}

/** `bench.set`: returns `{v}` — the smallest action with a validated param, as the harness's test actions. */
export function benchRegistry(): Registry {
  const set = defineAction({
    name: 'bench.set',
    description: 'returns {v} (benchmark no-op)',
    params: v.object({ v: v.unknown() }),
    run: (p) => ({ v: p.v }),
  })
  return createRegistry([...builtinActions(), set])
}

function nodeYaml(kind: Kind, i: number): string {
  switch (kind) {
    case 'action':
      return `  - name: n${i}\n    uses: bench.set\n    with: { v: ${i} }\n`
    case 'template':
      return `  - name: n${i}\n    uses: bench.set\n    with: { v: "{{ state.i }}" }\n`
    case 'run':
      return `  - name: n${i}\n    run: |\n      return { i: state.i + 1 }\n`
    case 'transform':
      return `  - name: n${i}\n    uses: json.transform\n    with: { data: { a: ${i}, b: 2 }, pick: [a] }\n`
  }
}

/** A linear agent of `n` nodes (implicit chaining, no edges); `max_steps` raised to fit. */
export function linearAgentYaml(kind: Kind, n: number): string {
  let text = `name: linear-${kind}-${n}\nsettings:\n  max_steps: ${n + 10}\ninitial_state:\n  i: 0\nnodes:\n`
  for (let i = 0; i < n; i++) text += nodeYaml(kind, i)
  return text
}
