/**
 * What the status page shows of an agent: the form to start it (its `state_schema` as typed fields over its
 * `initial_state`), its graph laid out for drawing (the arrows `tea graph` draws, agent/graph.ts, placed in rows by
 * distance from the start), and what a run paused at one of its interrupts waits for. Positions and paths are numbers
 * only: the page puts them in SVG attributes and every name in text nodes.
 */

import { arrows } from '../../agent/graph.ts'
import { END, START, type AgentSpec, type NodeSpec } from '../../agent/types.ts'
import type { State } from '../../core/util.ts'
import type { Cursor } from '../../store/types.ts'
import { inputSchemaOf } from '../mcp/agent-tools.ts'

export interface GraphNode {
  id: string
  /** The action (`uses:`), `run:` for code, absent for start and end. */
  uses?: string
  kind: 'start' | 'end' | 'node'
  x: number
  y: number
  w: number
  h: number
}

export interface GraphEdge {
  from: string
  to: string
  label?: string
  dashed?: boolean
  /** An SVG path (numbers and the letters M, C, L only). */
  path: string
  /** Where the label goes. */
  lx: number
  ly: number
}

export interface GraphView {
  nodes: GraphNode[]
  edges: GraphEdge[]
  width: number
  height: number
}

const NODE_W = 150
const NODE_H = 40
const PILL_W = 64
const GAP_X = 20
const ROW = 76
const MARGIN = 12
/** Room on the right for arrows that go back up (loops, retries). */
const BACK_ROOM = 40

/** The agent's graph in rows: a node's row is its distance from the start (breadth first); loops go back up on the right. */
export function graphView(spec: AgentSpec): GraphView {
  const list = arrows(spec)
  const out = new Map<string, string[]>()
  for (const a of list) out.set(a.from, [...(out.get(a.from) ?? []), a.to])
  const rank = new Map<string, number>([[START, 0]])
  const queue = [START]
  while (queue.length) {
    const at = queue.shift()!
    for (const to of out.get(at) ?? []) {
      if (rank.has(to)) continue
      rank.set(to, rank.get(at)! + 1)
      queue.push(to)
    }
  }
  // Nodes nothing leads to (reached only by an action that runs them by name) go in a last row.
  const deepest = Math.max(...rank.values())
  for (const n of spec.nodes) if (!rank.has(n.name)) rank.set(n.name, deepest + 1)
  const ids = [START, ...spec.nodes.map((n) => n.name), ...(rank.has(END) ? [END] : [])]
  const rows: string[][] = []
  for (const id of ids) (rows[rank.get(id)!] ??= []).push(id)
  const widthOf = (id: string) => (id === START || id === END ? PILL_W : NODE_W)
  const rowWidth = (row: string[]) => row.reduce((s, id) => s + widthOf(id), 0) + GAP_X * (row.length - 1)
  const inner = Math.max(...rows.filter(Boolean).map(rowWidth))
  const width = inner + 2 * MARGIN + BACK_ROOM
  const byName = new Map(spec.nodes.map((n) => [n.name, n]))
  const nodes: GraphNode[] = []
  const place = new Map<string, GraphNode>()
  rows.forEach((row, r) => {
    if (!row) return
    let x = MARGIN + (inner - rowWidth(row)) / 2
    for (const id of row) {
      const n = byName.get(id)
      const node: GraphNode = {
        id,
        kind: id === START ? 'start' : id === END ? 'end' : 'node',
        ...(n && { uses: n.uses ?? 'run:' }),
        x: Math.round(x),
        y: MARGIN + r * ROW,
        w: widthOf(id),
        h: id === START || id === END ? 28 : NODE_H,
      }
      x += node.w + GAP_X
      nodes.push(node)
      place.set(id, node)
    }
  })
  const edges: GraphEdge[] = list.map((a) => {
    const s = place.get(a.from)!
    const t = place.get(a.to)!
    let path: string
    let lx: number
    let ly: number
    if (t.y > s.y) {
      const x1 = s.x + s.w / 2
      const y1 = s.y + s.h
      const x2 = t.x + t.w / 2
      const y2 = t.y
      const mid = (y1 + y2) / 2
      path = `M${x1} ${y1} C${x1} ${mid} ${x2} ${mid} ${x2} ${y2}`
      lx = (x1 + x2) / 2
      ly = mid
    } else {
      // Back up (or across): out of the source's right side and into the target's, around the right margin.
      const x1 = s.x + s.w
      const y1 = s.y + s.h / 2
      const x2 = t.x + t.w
      const y2 = t.y + t.h / 2
      const bend = Math.max(x1, x2) + BACK_ROOM - 6
      path = `M${x1} ${y1} C${bend} ${y1} ${bend} ${y2} ${x2} ${y2}`
      lx = bend - 4
      ly = (y1 + y2) / 2
    }
    return {
      from: a.from,
      to: a.to,
      ...(a.label !== undefined && { label: a.label }),
      ...(a.dashed && { dashed: true }),
      path,
      lx: Math.round(lx),
      ly: Math.round(ly),
    }
  })
  return { nodes, edges, width: Math.round(width), height: MARGIN * 2 + (rows.length - 1) * ROW + NODE_H }
}

/** The start form's fields: each `state_schema` key with its JSON type, and the initial state the run starts from. */
export function agentView(spec: AgentSpec, file: string): Record<string, unknown> {
  const properties = (inputSchemaOf(spec).properties ?? {}) as Record<string, { type?: string }>
  return {
    name: spec.name,
    file,
    ...(spec.description !== undefined && { description: spec.description }),
    fields: Object.entries(properties).map(([key, s]) => ({ key, type: s.type ?? 'any' })),
    initial_state: spec.initialState,
    interrupts: { before: [...spec.interruptBefore], after: [...spec.interruptAfter] },
    graph: graphView(spec),
  }
}

export interface PausedView {
  node: string
  when: 'before' | 'after'
  /** The paused node's `description`, else what paused where. */
  message: string
  /** The state keys the run reads next: the paused node's (before) or the next node's (after), and what the paused node wrote. */
  keys: string[]
  /** Their values now. */
  values: State
}

/** Top-level keys read through `state.KEY` or `state["KEY"]`. */
const STATE_KEY = /\bstate\s*(?:\.\s*([A-Za-z_$][\w$]*)|\[\s*["']([^"'\]]{1,100})["']\s*\])/g
const MAX_KEYS = 20

/** What a run paused at an interrupt waits for. */
export function pausedView(
  spec: AgentSpec,
  runNode: string | null,
  cursor: Cursor,
  state: State,
  /** The keys the paused node's update held, when known (the run ran in this process). */
  wrote: string[] = [],
): PausedView {
  const when = cursor.skipInterruptBefore ? 'before' : 'after'
  const node = when === 'before' ? cursor.next : (runNode ?? cursor.next)
  const paused = spec.nodes.find((n) => n.name === node)
  const next = when === 'before' ? paused : spec.nodes.find((n) => n.name === cursor.next)
  const keys = new Set<string>()
  if (when === 'after' && paused) for (const k of [...wrote, ...written(paused)]) keys.add(k)
  if (next) for (const k of read(next)) keys.add(k)
  const list = [...keys].slice(0, MAX_KEYS)
  return {
    node,
    when,
    message: paused?.description ?? `paused ${when} node '${node}'`,
    keys: list,
    values: Object.fromEntries(list.filter((k) => Object.hasOwn(state, k)).map((k) => [k, state[k]])),
  }
}

function read(node: NodeSpec): string[] {
  const text = [
    JSON.stringify(node.with ?? {}),
    node.run ?? '',
    typeof node.output === 'object' ? JSON.stringify(node.output) : '',
    Array.isArray(node.goto) ? node.goto.map((r) => r.if ?? '').join('\n') : '',
  ].join('\n')
  return [...text.matchAll(STATE_KEY)].map((m) => (m[1] ?? m[2])!)
}

function written(node: NodeSpec): string[] {
  if (typeof node.output === 'string') return [node.output]
  if (node.output && typeof node.output === 'object') return Object.keys(node.output)
  return []
}
