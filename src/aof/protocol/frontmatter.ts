/**
 * Markdown-with-YAML-frontmatter, as AOF writes it: line 1 is `---`, the frontmatter ends at the next line that is
 * exactly `---`, the body follows. YAML is parsed with the 1.2 core schema so unquoted ISO timestamps stay
 * strings (a 1.1 parser would turn them into dates and AOF's string check would then reject the file).
 *
 * This is the one module of src/aof that imports `yaml` (the house rule allows one importer per package; the
 * agent loader is the other, see docs/aof.md).
 */

import { JSON_MAX_DEPTH, jsonDepth, valueDepth } from '../../core/json.ts'
import { parse, stringify } from 'yaml'
import { TeaError } from '../../core/errors.ts'
import { isPlainObject } from '../../core/util.ts'

export interface FrontmatterDoc {
  data: Record<string, unknown>
  body: string
}

/** The most frontmatter read (its YAML; the body is not limited here). */
const MAX_FRONTMATTER_BYTES = 64 * 1024

/** The frontmatter and body of `text`; AOF_INVALID placed in `file` (at the line, when there is one) otherwise. */
export function parseFrontmatter(text: string, file: string): FrontmatterDoc {
  // Split on LF alone, as the reference does, so a CRLF body keeps its bytes (and its contentHash). A CRLF fence and
  // CRLF frontmatter are accepted too (the reference rejects such a file): the `\r` is dropped from the YAML only.
  const lines = text.split('\n')
  if (lines[0]?.trim() !== '---') {
    throw new TeaError('AOF_INVALID', `expected the frontmatter fence '---', found ${describeFirstLine(lines[0] ?? '')}`, {
      where: { file, line: 1 },
    })
  }
  const end = lines.findIndex((l, i) => i > 0 && (l === '---' || l === '---\r'))
  if (end === -1) throw new TeaError('AOF_INVALID', "expected a closing '---' after the frontmatter, found none", { where: { file } })
  const yaml = lines.slice(1, end).map(dropCr).join('\n')
  // A task's frontmatter is a few hundred bytes; the body below it is free. yaml takes ~12 µs a node, so a file
  // from another agent with a megabyte-long flow list would hold a worker for seconds.
  if (yaml.length > MAX_FRONTMATTER_BYTES) {
    throw new TeaError('AOF_INVALID', `the frontmatter is larger than ${MAX_FRONTMATTER_BYTES} bytes`, { where: { file } })
  }
  // yaml's parser recurses into flow collections, slowly past a few thousand levels: a task file from another
  // agent is refused before that (a block mapping that deep would be megabytes of indentation, and is caught below).
  if (jsonDepth(yaml, JSON_MAX_DEPTH) > JSON_MAX_DEPTH) {
    throw new TeaError('AOF_INVALID', `the frontmatter nests deeper than ${JSON_MAX_DEPTH} levels`, { where: { file } })
  }
  let data: unknown
  try {
    data = parse(yaml, { schema: 'core', prettyErrors: true, logLevel: 'error' })
  } catch (e) {
    const at = (e as { linePos?: Array<{ line: number; col: number }> }).linePos?.[0]
    // +1: the YAML starts on the line after the opening fence.
    const where = at ? { file, line: at.line + 1, col: at.col } : { file }
    throw new TeaError('AOF_INVALID', `the frontmatter is not valid YAML: ${(e as Error).message.split('\n')[0]}`, { where })
  }
  if (valueDepth(data, JSON_MAX_DEPTH) > JSON_MAX_DEPTH) {
    throw new TeaError('AOF_INVALID', `the frontmatter nests deeper than ${JSON_MAX_DEPTH} levels`, { where: { file } })
  }
  if (!isPlainObject(data)) {
    const found = data === null ? 'nothing' : typeof data
    throw new TeaError('AOF_INVALID', `expected the frontmatter to be a YAML mapping, found ${found}`, { where: { file } })
  }
  return {
    data,
    body: lines
      .slice(end + 1)
      .join('\n')
      .trim(),
  }
}

function dropCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line
}

/** The exact shape AOF serialises: fences, 120-column YAML, a blank line, the body, a final newline. */
export function stringifyFrontmatter(data: Record<string, unknown>, body: string): string {
  const yaml = stringify(data, { lineWidth: 120 })
  return `---\n${yaml}---\n\n${body}\n`
}

/**
 * What stands where the fence should, without quoting the file: a file that is not a task at all (a hard link to
 * /etc/passwd, a key file) must not have its first line printed in an error or a listing. A near-fence (`----`,
 * `--- yaml`) is short and harmless, and quoting it shows the typo.
 */
function describeFirstLine(line: string): string {
  if (line === '') return 'an empty first line'
  if (/^\s*-{1,5}[^\n]{0,10}$/.test(line)) return JSON.stringify(line)
  return `a first line of ${line.length} characters that is not a fence`
}
