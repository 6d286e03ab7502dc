/**
 * TEA's other spellings of tea's keys, rewritten in place before the file is validated (as tea-nodes.ts does for
 * TEA's node kinds), so the loader and the engine see tea's own:
 * - `output_key:` on an action node is `output:` (TEA's yaml_nodes.py reads `output`, else `output_key`); on a
 *   `run:` node TEA reads neither, and the loader says so for `output:`;
 * - an edge with `parallel: true` is TEA's parallel edge as its reference documents it (`{from, to, parallel:
 *   true, fan_in}`, one edge per branch, navigation.md), which tea gathers by source like `type: parallel`;
 * - a parameter TEA's action takes and never uses (`plan.replan`'s `context`) is set aside, and said so.
 */

import { isPlainObject } from '../core/util.ts'

/** A parameter set aside, at its path in the file. */
export interface SetAside {
  path: Array<string | number>
  message: string
}

/**
 * Parameters TEA's action accepts (its `**kwargs`) but does not read. plan.replan (planning_actions.py) builds its
 * prompt from the plan and its results only; the rest it hands to the model client as arguments.
 */
const UNREAD_PARAMS: Readonly<Record<string, readonly string[]>> = {
  'plan.replan': ['context', 'preserve_completed'],
}

export function lowerTeaSpellings(data: Record<string, unknown>): SetAside[] {
  const aside: SetAside[] = []
  if (Array.isArray(data.nodes))
    data.nodes = data.nodes.map((n, i) => {
      if (!isPlainObject(n)) return n
      const unread = UNREAD_PARAMS[String(n.uses ?? n.action)]
      if (unread && isPlainObject(n.with) && unread.some((k) => k in (n.with as object))) {
        const params = { ...n.with }
        for (const k of unread.filter((k) => k in params)) {
          delete params[k]
          const message = `'nodes.${i}.with.${k}' is not read by TEA's ${String(n.uses ?? n.action)} either (it is not in its prompt; TEA passes it on to the model client); tea sets it aside`
          aside.push({ path: ['nodes', i, 'with', k], message })
        }
        n = { ...n, with: params }
      }
      if (n.output_key === undefined || n.output !== undefined || n.run !== undefined) return n
      const { output_key, ...rest } = n
      return { ...rest, output: output_key }
    })
  if (Array.isArray(data.edges))
    data.edges = data.edges.map((e) => {
      if (!isPlainObject(e) || e.parallel !== true || (e.type !== undefined && e.type !== 'parallel')) return e
      const { parallel: _, ...rest } = e
      return { ...rest, type: 'parallel' }
    })
  return aside
}
