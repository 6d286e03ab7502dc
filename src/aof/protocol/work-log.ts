/**
 * The `## Work Log` section of a task body: exactly one, entries appended at its end. The reference appended a
 * fresh heading per entry; bodies it wrote that way are folded into one section on our next append. An entry is
 * `- <sentAt> Progress: … | Notes: … | Blockers: a, b`; stamping it with the message's `sentAt` (not the arrival
 * time) makes a re-delivered message produce the same line, which is then not appended twice.
 */

const HEADING = /^##\s+Work Log\s*$/
const ANY_HEADING = /^#{1,2}\s/

export interface WorkLogParts {
  progress?: string
  notes?: string
  blockers?: readonly string[]
}

export function workLogEntry(at: string, parts: WorkLogParts): string | undefined {
  const bits: string[] = []
  if (parts.progress) bits.push(`Progress: ${oneLine(parts.progress)}`)
  if (parts.notes) bits.push(`Notes: ${oneLine(parts.notes)}`)
  if (parts.blockers && parts.blockers.length > 0) bits.push(`Blockers: ${parts.blockers.map(oneLine).join(', ')}`)
  return bits.length === 0 ? undefined : `- ${at} ${bits.join(' | ')}`
}

// An entry is one list item; a newline inside a note would otherwise end it (or start a heading).
function oneLine(s: string): string {
  return s.replace(/\s*\r?\n\s*/g, ' ').trim()
}

/** The body with `entry` appended to its single Work Log section; unchanged when the entry is already there. */
export function appendWorkLog(body: string, entry: string): string {
  const lines = body.split('\n')
  const sections = sectionRanges(lines)
  if (sections.length === 0) {
    const head = body.trimEnd()
    return `${head === '' ? '' : `${head}\n\n`}## Work Log\n${entry}`
  }
  const entries = sections.flatMap(([start, end]) => lines.slice(start + 1, end).filter((l) => l.trim() !== ''))
  if (entries.includes(entry)) return sections.length === 1 ? body : rebuild(lines, sections, entries)
  return rebuild(lines, sections, [...entries, entry])
}

export function workLogEntries(body: string): string[] {
  const lines = body.split('\n')
  return sectionRanges(lines).flatMap(([s, e]) => lines.slice(s + 1, e).filter((l) => l.trim() !== ''))
}

function sectionRanges(lines: string[]): Array<[number, number]> {
  const out: Array<[number, number]> = []
  for (let i = 0; i < lines.length; i++) {
    if (!HEADING.test(lines[i]!)) continue
    let end = i + 1
    while (end < lines.length && !ANY_HEADING.test(lines[end]!)) end++
    out.push([i, end])
    i = end - 1
  }
  return out
}

function rebuild(lines: string[], sections: Array<[number, number]>, entries: string[]): string {
  const [firstStart, firstEnd] = sections[0]!
  const out: string[] = [...lines.slice(0, firstStart), '## Work Log', ...entries]
  let cursor = firstEnd
  for (const [start, end] of sections.slice(1)) {
    out.push(...lines.slice(cursor, start))
    cursor = end
  }
  const rest = lines.slice(cursor)
  if (rest.some((l) => l.trim() !== '')) out.push('', ...trimBlank(rest))
  return trimBlank(out).join('\n')
}

function trimBlank(lines: string[]): string[] {
  let s = 0
  let e = lines.length
  while (s < e && lines[s]!.trim() === '') s++
  while (e > s && lines[e - 1]!.trim() === '') e--
  return lines.slice(s, e)
}
