/**
 * Turning a model's reply into proposed subtasks. The reply is found tolerantly (the whole text, a code fence, the
 * first balanced JSON span — src/core/json-extract.ts), validated leniently (reply-schemas.ts), then flattened:
 * hierarchical replies become one DAG with path ids (`2`, `2.1`, `2.1.3`). A group's own dependencies pass to its
 * members; depending on a group means depending on all its members; levels deeper than `max_depth` are folded into
 * their ancestor at `max_depth`, whose description lists what was folded.
 */

import * as v from 'valibot'
import { TeaError } from '../core/errors.ts'
import { extractJson } from '../core/json-extract.ts'
import type { LooseReply, LooseSubtask } from './reply-schemas.ts'
import { looseArrayReply, looseObjectReply } from './reply-schemas.ts'
import type { ProposedSubtask } from './types.ts'

const RAW_LIMIT = 500

/** Parses reply text (or an already-parsed value from structured output) into a lenient reply. */
export function parseReply(text: string, where?: string, parsed?: unknown): LooseReply {
  let value = parsed
  if (value === undefined) {
    const extracted = extractJson(text)
    if (!extracted.ok) throw parseError(where, extracted.reason, text)
    value = extracted.value
  }
  const schema = Array.isArray(value) ? looseArrayReply : looseObjectReply
  const r = v.safeParse(schema, value)
  if (r.success) return r.output
  if (typeof value !== 'object' || value === null)
    throw parseError(where, `expected a JSON object with a "subtasks" array, got ${JSON.stringify(value)}`, text)
  const issues = r.issues.map((i) => `${v.getDotPath(i) ?? '(reply)'}: ${i.message}`)
  throw parseError(where, issues.slice(0, 5).join('; '), text)
}

/**
 * PLAN_PARSE_ERROR with the raw reply (truncated) for debugging and nothing of ours: no stack, no schema internals.
 */
export function parseError(where: string | undefined, reason: string, raw: string): TeaError {
  const shown = raw.length > RAW_LIMIT ? `${raw.slice(0, RAW_LIMIT)}… (${raw.length - RAW_LIMIT} more characters)` : raw
  return new TeaError(
    'PLAN_PARSE_ERROR',
    `${where ? `${where}: ` : ''}the model's reply is not a usable plan (${reason}). Reply: ${shown}`,
    {
      details: { reply: shown },
      hint: 'a plan reply is JSON like {"subtasks": [{"id": "1", "description": "…", "dependencies": []}]}',
    },
  )
}

/** A flat list: missing ids become their 1-based position; the list is cut at `maxSubtasks`. */
export function flattenFlat(subtasks: readonly LooseSubtask[], maxSubtasks = Infinity): ProposedSubtask[] {
  const withIds = subtasks.map((s, i) => ({ ...s, id: s.id ?? String(i + 1) }))
  const kept = withIds.slice(0, maxSubtasks)
  const dropped = new Set(withIds.slice(maxSubtasks).map((s) => s.id))
  return kept.map((s) =>
    proposed(
      s.id,
      s.description,
      (s.dependencies ?? []).filter((d) => !dropped.has(d)),
      s.timeout,
    ),
  )
}

interface Leaf {
  id: string
  description: string
  rawDeps: string[]
  /** Path ids of the groups containing this leaf, innermost last. */
  groups: string[]
  timeout?: number
}

/** Flattens a nested reply; depth 1 is the top level. */
export function flattenHierarchy(top: readonly LooseSubtask[], maxDepth: number, maxSubtasks = Infinity): ProposedSubtask[] {
  const leaves: Leaf[] = []
  const groupLeaves = new Map<string, string[]>()
  const scoped = new Map<string, string>() // `${scope}|${modelId}` → path id
  const global = new Map<string, string>() // modelId → path id (first wins)
  const alias = (scope: string, modelId: string | undefined, pathId: string): void => {
    if (modelId === undefined) return
    if (!scoped.has(`${scope}|${modelId}`)) scoped.set(`${scope}|${modelId}`, pathId)
    if (!global.has(modelId)) global.set(modelId, pathId)
  }
  const walk = (nodes: readonly LooseSubtask[], scope: string, depth: number, inherited: string[], groups: string[]): void => {
    nodes.forEach((node, i) => {
      const id = scope === '' ? String(i + 1) : `${scope}.${i + 1}`
      alias(scope, node.id, id)
      const deps = [...inherited, ...(node.dependencies ?? []).map((d) => `${scope}|${d}`)]
      if (node.subtasks && depth < maxDepth) {
        const before = leaves.length
        walk(node.subtasks, id, depth + 1, deps, [...groups, id])
        groupLeaves.set(
          id,
          leaves.slice(before).map((l) => l.id),
        )
      } else if (node.subtasks) {
        const folded = fold(node.subtasks, id, (modelId) => alias(id, modelId, id))
        const leaf: Leaf = {
          id,
          description: `${node.description}\n${folded.lines.join('\n')}`,
          rawDeps: [...deps, ...folded.deps],
          groups,
        }
        if (node.timeout !== undefined) leaf.timeout = node.timeout
        leaves.push(leaf)
      } else {
        const leaf: Leaf = { id, description: node.description, rawDeps: deps, groups }
        if (node.timeout !== undefined) leaf.timeout = node.timeout
        leaves.push(leaf)
      }
    })
  }
  walk(top, '', 1, [], [])

  const resolve = (ref: string): string[] => {
    const bar = ref.indexOf('|')
    const scope = ref.slice(0, bar)
    const name = ref.slice(bar + 1)
    const target = scoped.get(`${scope}|${name}`) ?? global.get(name) ?? name
    return groupLeaves.get(target) ?? [target]
  }
  const kept = leaves.slice(0, maxSubtasks)
  const dropped = new Set(leaves.slice(maxSubtasks).map((l) => l.id))
  return kept.map((leaf) => {
    const deps: string[] = []
    for (const ref of leaf.rawDeps)
      for (const d of resolve(ref)) {
        // A member depending on its own group (or a folded part of itself) is no dependency at all.
        if (d === leaf.id || leaf.groups.includes(d) || groupLeaves.get(d)?.includes(leaf.id)) continue
        if (!dropped.has(d) && !deps.includes(d)) deps.push(d)
      }
    const p = proposed(leaf.id, leaf.description, deps, leaf.timeout)
    return leaf.groups.length > 0 ? { ...p, parent: leaf.groups[leaf.groups.length - 1]! } : p
  })
}

/** Folds a subtree into description lines; dependencies leaving the subtree are kept (scoped to `scope`). */
function fold(
  nodes: readonly LooseSubtask[],
  scope: string,
  alias: (modelId: string | undefined) => void,
): { lines: string[]; deps: string[] } {
  const lines: string[] = []
  const deps: string[] = []
  const inner = new Set<string>()
  const visit = (list: readonly LooseSubtask[], indent: string): void => {
    for (const n of list) {
      alias(n.id)
      if (n.id !== undefined) inner.add(n.id)
      lines.push(`${indent}- ${n.description}`)
      for (const d of n.dependencies ?? []) deps.push(d)
      if (n.subtasks) visit(n.subtasks, `${indent}  `)
    }
  }
  visit(nodes, '')
  return { lines, deps: deps.filter((d) => !inner.has(d)).map((d) => `${scope}|${d}`) }
}

function proposed(id: string, description: string, dependencies: string[], timeout?: number): ProposedSubtask {
  const p: ProposedSubtask = { id, description, dependencies }
  if (timeout !== undefined) p.timeout = timeout
  return p
}
