/**
 * A plan as a Mermaid flowchart, one box per subtask coloured by status, arrows from a dependency to its
 * dependent. Node names are positional (`t0`, `t1`, …) because subtask ids such as `2.1` or `end` are not safe
 * Mermaid identifiers; the id is shown in the label instead.
 */

import type { Subtask, SubtaskStatus } from './types.ts'

const STYLE: Record<SubtaskStatus, string> = {
  pending: 'fill:#eeeeee,stroke:#9e9e9e,color:#212121',
  in_progress: 'fill:#bbdefb,stroke:#1565c0,color:#0d47a1',
  completed: 'fill:#c8e6c9,stroke:#2e7d32,color:#1b5e20',
  failed: 'fill:#ffcdd2,stroke:#c62828,color:#b71c1c',
  skipped: 'fill:#fff9c4,stroke:#f9a825,color:#795548',
}

const LABEL_MAX = 60

export function planToMermaid(subtasks: readonly Subtask[]): string {
  const name = new Map<string, string>()
  subtasks.forEach((s, i) => name.set(s.id, `t${i}`))
  const lines = ['flowchart TD']
  for (const s of subtasks) lines.push(`  ${name.get(s.id)}["${label(`${s.id}: ${s.description}`)}"]:::${s.status}`)
  for (const s of subtasks)
    for (const d of s.dependencies) {
      const from = name.get(d)
      if (from) lines.push(`  ${from} --> ${name.get(s.id)}`)
    }
  const used = new Set(subtasks.map((s) => s.status))
  for (const [status, style] of Object.entries(STYLE)) if (used.has(status as SubtaskStatus)) lines.push(`  classDef ${status} ${style}`)
  return lines.join('\n')
}

function label(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim()
  const cut = oneLine.length > LABEL_MAX ? `${oneLine.slice(0, LABEL_MAX - 1)}…` : oneLine
  // Mermaid entity codes: a raw quote ends the label, and < > & could be read as markup.
  return cut.replace(/&/g, '#amp;').replace(/"/g, '#quot;').replace(/</g, '#lt;').replace(/>/g, '#gt;')
}
