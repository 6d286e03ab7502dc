/**
 * TEA's `dynamic_parallel` with `subgraph:` runs another agent file once per item (yaml_nodes.py
 * `_create_dynamic_parallel_subgraph_branch`): the path is relative to the parent file's folder, the sub-agent's
 * state starts as the node's `input:` mapping rendered for the item, and the branch's state is the sub-agent's final
 * state. tea reads the file when the parent loads and gives its nodes to `flow.map` as each item's steps
 * (tea-nodes.ts), so the items are checkpointed one by one as in the other two modes.
 *
 * What a list of steps can be is what tea takes: a sub-agent whose nodes are `run:` or action nodes, run in file
 * order or along one unconditional chain of edges from `__start__` to `__end__`. Routing (conditions, goto, parallel
 * edges), node kinds (`type:`, `steps:`) and interrupts are not steps; such a sub-agent is left as TEA wrote it and
 * named a TEA feature tea does not have. The path is confined to the parent file's folder as `file.*` paths are to
 * the workspace (docs/security.md): no absolute path, no URL (TEA's fsspec: s3://, http://…), no `..` out of it, no
 * symbolic link out of it.
 */

import { readFileSync, realpathSync, statSync } from 'node:fs'
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import { isPlainObject } from '../core/util.ts'
import { parseYaml } from './parse.ts'

/** A sub-agent's file may be at most this big (a parent's own text has its own limit in the loader). */
const MAX_BYTES = 1 << 20

/** Keys a sub-agent's node may have to become a step. */
const STEP_KEYS = new Set(['name', 'description', 'run', 'script', 'language', 'uses', 'action', 'with', 'output'])

export interface SubAgent {
  /** The sub-agent's nodes in the order they run. */
  nodes: Array<Record<string, unknown>>
  /** The sub-agent's `settings.run_language`, which pins its unmarked bodies' language. */
  runLanguage?: string
}

/** The sub-agent `path` names, read from beside `parentFile`; a sentence saying why not when tea cannot take it. */
export function readSubAgent(path: string, parentFile: string): SubAgent | string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) return `the subgraph '${path}' is a URL; tea reads a sub-agent from the agent's folder only`
  if (isAbsolute(path)) return `the subgraph '${path}' is an absolute path; give it relative to the agent's folder`
  const base = dirname(resolve(parentFile))
  const full = resolve(base, path)
  let text: string
  try {
    if (outside(base, full) || outside(realpathSync(base), realpathSync(full)))
      return `the subgraph '${path}' is outside the agent's folder`
    const stat = statSync(full)
    // Not a FIFO or a device, whose read would block or never end.
    if (!stat.isFile()) return `the subgraph '${path}' is not a regular file`
    if (stat.size > MAX_BYTES) return `the subgraph '${path}' is over ${MAX_BYTES} bytes`
    text = readFileSync(full, 'utf8')
  } catch (e) {
    return `cannot read the subgraph '${path}': ${(e as NodeJS.ErrnoException).code ?? String(e)}`
  }
  const parsed = parseYaml(text)
  if (parsed.errors.length) return `the subgraph '${path}' is not valid YAML: ${parsed.errors[0]!.message}`
  const data = parsed.data
  if (!isPlainObject(data) || !Array.isArray(data.nodes) || !data.nodes.every(isPlainObject))
    return `the subgraph '${path}' is not an agent file with nodes`
  const nodes = data.nodes as Array<Record<string, unknown>>
  for (const n of nodes) {
    const other = Object.keys(n).find((k) => !STEP_KEYS.has(k))
    if (other !== undefined)
      return `the subgraph '${path}': node '${String(n.name)}' has ${other}:, which a step of a dynamic_parallel item cannot have`
  }
  const order = chain(nodes, data.edges)
  if (typeof order === 'string') return `the subgraph '${path}': ${order}`
  const runLanguage =
    isPlainObject(data.settings) && typeof data.settings.run_language === 'string' ? data.settings.run_language : undefined
  return { nodes: order, ...(runLanguage !== undefined && { runLanguage }) }
}

function outside(base: string, full: string): boolean {
  const rel = relative(base, full)
  return rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)
}

/** The nodes in the order the edges run them: file order without edges, else one unconditional chain. */
function chain(nodes: Array<Record<string, unknown>>, edges: unknown): Array<Record<string, unknown>> | string {
  if (edges === undefined) return nodes
  if (!Array.isArray(edges) || !edges.every(isPlainObject)) return 'its edges are not a list of mappings'
  const next = new Map<unknown, unknown>()
  for (const e of edges) {
    const extra = Object.keys(e).find((k) => k !== 'from' && k !== 'to')
    if (extra !== undefined || typeof e.to !== 'string') return 'its edges route (conditions, parallel edges), which steps do not'
    if (next.has(e.from)) return `two edges leave '${String(e.from)}'`
    next.set(e.from, e.to)
  }
  const byName = new Map(nodes.map((n) => [n.name, n]))
  const order: Array<Record<string, unknown>> = []
  for (let at = next.get('__start__'); at !== '__end__'; at = next.get(at)) {
    const node = byName.get(at)
    if (node === undefined || order.includes(node)) return `its edges do not lead from __start__ to __end__ through its nodes once each`
    order.push(node)
  }
  if (order.length !== nodes.length) return 'its edges leave some of its nodes out'
  return order
}
