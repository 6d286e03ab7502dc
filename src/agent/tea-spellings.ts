/**
 * TEA's other spellings of tea's keys, rewritten in place before the file is validated (as tea-nodes.ts does for
 * TEA's node kinds), so the loader and the engine see tea's own:
 * - `output_key:` on an action node is `output:` (TEA's yaml_nodes.py reads `output`, else `output_key`); on a
 *   `run:` node TEA reads neither, and the loader says so for `output:`;
 * - an edge with `parallel: true` is TEA's parallel edge as its reference documents it (`{from, to, parallel:
 *   true, fan_in}`, one edge per branch, navigation.md), which tea gathers by source like `type: parallel`.
 */

import { isPlainObject } from '../core/util.ts'

export function lowerTeaSpellings(data: Record<string, unknown>): void {
  if (Array.isArray(data.nodes))
    data.nodes = data.nodes.map((n) => {
      if (!isPlainObject(n) || n.output_key === undefined || n.output !== undefined || n.run !== undefined) return n
      const { output_key, ...rest } = n
      return { ...rest, output: output_key }
    })
  if (Array.isArray(data.edges))
    data.edges = data.edges.map((e) => {
      if (!isPlainObject(e) || e.parallel !== true || (e.type !== undefined && e.type !== 'parallel')) return e
      const { parallel: _, ...rest } = e
      return { ...rest, type: 'parallel' }
    })
}
