/**
 * Markdown-with-YAML-frontmatter, as AOF writes it: line 1 is `---`, the frontmatter ends at the next line that is
 * exactly `---`, the body follows. YAML is parsed with the 1.2 core schema so unquoted ISO timestamps stay
 * strings (a 1.1 parser would turn them into dates and AOF's string check would then reject the file).
 *
 * This is the one module of src/aof that imports `yaml` (the house rule allows one importer per package; the
 * agent loader is the other, see docs/aof.md).
 */

import { parse, stringify } from 'yaml'
import { TeaError } from '../core/errors.ts'
import { isPlainObject } from '../core/util.ts'

export interface FrontmatterDoc {
  data: Record<string, unknown>
  body: string
}

export function parseFrontmatter(text: string, where: string): FrontmatterDoc {
  // CRLF files are accepted on read (AOF itself rejects them); we always write LF.
  const lines = text.replace(/\r\n/g, '\n').split('\n')
  if (lines[0]?.trim() !== '---') {
    throw new TeaError('AOF_INVALID', `${where}:1: expected the frontmatter fence '---' on line 1, found ${JSON.stringify(lines[0] ?? '')}`)
  }
  const end = lines.indexOf('---', 1)
  if (end === -1) throw new TeaError('AOF_INVALID', `${where}: expected a closing '---' after the frontmatter, found none`)
  let data: unknown
  try {
    data = parse(lines.slice(1, end).join('\n'), { schema: 'core', prettyErrors: true })
  } catch (e) {
    const line = (e as { linePos?: Array<{ line: number; col: number }> }).linePos?.[0]
    const at = line ? `${where}:${line.line + 1}:${line.col}` : where
    throw new TeaError('AOF_INVALID', `${at}: the frontmatter is not valid YAML: ${(e as Error).message.split('\n')[0]}`)
  }
  if (!isPlainObject(data)) {
    throw new TeaError('AOF_INVALID', `${where}: expected the frontmatter to be a YAML mapping, found ${data === null ? 'nothing' : typeof data}`)
  }
  return { data, body: lines.slice(end + 1).join('\n').trim() }
}

/** The exact shape AOF serialises: fences, 120-column YAML, a blank line, the body, a final newline. */
export function stringifyFrontmatter(data: Record<string, unknown>, body: string): string {
  const yaml = stringify(data, { lineWidth: 120 })
  return `---\n${yaml}---\n\n${body}\n`
}
