/** The agent's control flow as Mermaid or DOT text: every node, goto rule (labelled with its condition), edge and fan-out. */

import { END, type AgentSpec } from './types.ts'

interface Arrow {
  from: string
  to: string
  label?: string
  dashed?: boolean
}

export function arrows(spec: AgentSpec): Arrow[] {
  const out: Arrow[] = [{ from: '__start__', to: spec.entry }]
  for (const node of spec.nodes) {
    if (typeof node.goto === 'string') out.push({ from: node.name, to: node.goto })
    else if (Array.isArray(node.goto)) for (const r of node.goto) out.push({ from: node.name, to: r.to, label: r.if ?? 'else' })
    else if (spec.parallel.has(node.name)) {
      const fan = spec.parallel.get(node.name)!
      for (const b of fan.to) out.push({ from: node.name, to: b, label: 'parallel' })
    } else out.push({ from: node.name, to: spec.edges.get(node.name) ?? spec.nodes[node.index + 1]?.name ?? END })
    if (node.onError.fallback) out.push({ from: node.name, to: node.onError.fallback, label: 'on error', dashed: true })
  }
  return out
}

export function renderGraph(spec: AgentSpec, format: 'mermaid' | 'dot'): string {
  const id = (name: string): string => name.replace(/[^A-Za-z0-9_]/g, '_')
  const list = arrows(spec)
  if (format === 'dot') {
    const lines = [
      `digraph "${spec.name.replace(/"/g, '\\"')}" {`,
      '  rankdir=TB;',
      '  "__start__" [shape=circle,label="start"];',
      '  "__end__" [shape=doublecircle,label="end"];',
    ]
    for (const n of spec.nodes) lines.push(`  "${n.name}" [shape=box,label="${n.name}\\n${(n.uses ?? 'run:').replace(/"/g, '\\"')}"];`)
    for (const a of list) {
      const attrs = [a.label ? `label="${a.label.replace(/"/g, '\\"')}"` : '', a.dashed ? 'style=dashed' : ''].filter(Boolean).join(',')
      lines.push(`  "${a.from}" -> "${a.to}"${attrs ? ` [${attrs}]` : ''};`)
    }
    lines.push('}')
    return lines.join('\n') + '\n'
  }
  const lines = ['flowchart TD', '  __start__((start))', '  __end__((end))']
  for (const n of spec.nodes) lines.push(`  ${id(n.name)}["${n.name}<br/><small>${(n.uses ?? 'run:').replace(/"/g, '#quot;')}</small>"]`)
  for (const a of list) {
    const arrow = a.dashed ? '-.->' : '-->'
    const label = a.label ? `|"${a.label.replace(/"/g, '#quot;')}"|` : ''
    lines.push(`  ${id(a.from)} ${arrow}${label} ${id(a.to)}`)
  }
  return lines.join('\n') + '\n'
}
