/**
 * What is wrong, and where, as data (valibot's pattern: an error carries its issues, each with a path, what was
 * expected and what arrived). `Where` is a structured place — a file position, or a node, its action, a plan
 * subtask, a field and the template in it — and `Issue` is one thing wrong, possibly at its own place. Neither
 * is ever baked into a message: the formatters below compose the human text once, for the CLI and for events, so
 * no code edits a message to add or remove a location.
 */

/** Where something happened. Every part is optional; the formatters print the parts that are set. */
export interface Where {
  file?: string
  /** 1-based line and column in `file` (the agent file, a task file). */
  line?: number
  col?: number
  node?: string
  /** The node's action (`llm.call`). */
  action?: string
  /** A plan subtask's id. */
  subtask?: string
  /** The place inside a node or action: `with.prompt`, `goto[0].if`, `subtask_executor`. */
  field?: string
  /**
   * The template source at fault. Not printed: a template error's message quotes the part around the fault, and
   * this is the whole template, for programs.
   */
  template?: string
}

/** One thing wrong. `path` is the dot-path inside the value that was checked (`headers.x-bad`, `blockers.0`). */
export interface Issue {
  /** An error code, or a checker's own code (`aof lint`'s `status_mismatch`, a plan's `cycle`). */
  code?: string
  message: string
  path?: Array<string | number>
  expected?: string
  received?: string
  /** Its own place, when issues of one error sit in different places (the problems of an agent file). */
  where?: Where
}

const PLACE_KEYS = ['file', 'line', 'col', 'node', 'action', 'subtask', 'field', 'template'] as const

/** `where` without its unset parts, or undefined when nothing is set (so JSON and deep-equality stay clean). */
export function compactWhere(where: Where | undefined): Where | undefined {
  if (!where) return undefined
  const out: Record<string, unknown> = {}
  for (const k of PLACE_KEYS) if (where[k] !== undefined) out[k] = where[k]
  return Object.keys(out).length ? (out as Where) : undefined
}

/**
 * The place as text: `a.yaml:4:5`, `node 'x' (llm.call), with.prompt`, `node 'n', subtask 3`. Empty when nothing
 * is set. Reads defensively, as it also formats places that came back through JSON.
 */
export function formatWhere(where: Where | undefined): string {
  if (typeof where !== 'object' || where === null) return ''
  const parts: string[] = []
  const { file, line, col, node, action, subtask, field } = where
  const at = line === undefined ? '' : col === undefined ? `${line}` : `${line}:${col}`
  if (file !== undefined) parts.push(at ? `${file}:${at}` : file)
  else if (line !== undefined) parts.push(col === undefined ? `line ${line}` : `line ${line}, column ${col}`)
  if (node !== undefined) parts.push(action === undefined ? `node '${node}'` : `node '${node}' (${action})`)
  else if (action !== undefined) parts.push(action)
  if (subtask !== undefined) parts.push(`subtask ${subtask}`)
  if (field !== undefined) parts.push(field)
  return parts.join(', ')
}

/**
 * One issue as a line: its file position and code first, as compilers and linters print them, then the rest of
 * its place and its path, then the message — `a.yaml:12:11: INVALID_PARAMS node 'b', with.url: …` (what `tea
 * validate` prints), `headers.x-bad: …`. An issue with no file position is one of a list under its error's own
 * line, where the message says what kind it is, so its code is left out.
 */
export function formatIssue(issue: Issue): string {
  const { file, line, col, ...inside } = issue.where ?? {}
  const position = formatWhere({ file, line, col })
  const head = position ? [`${position}:`, issue.code].filter(Boolean).join(' ') : ''
  const place = [formatWhere(inside), issue.path?.length ? issue.path.join('.') : ''].filter(Boolean).join(', ')
  return `${head ? `${head} ` : ''}${place ? `${place}: ` : ''}${issue.message}`
}

/** The part of a schema library's issue that `toIssues` reads (valibot's `BaseIssue`, structurally). */
interface SchemaIssueLike {
  message: string
  expected?: string | null
  received?: string
  path?: ReadonlyArray<{ key: unknown }> | undefined
}

/** A schema library's issues (valibot's) as ours: the message, the dot-path as keys, expected and received. */
export function toIssues(issues: readonly SchemaIssueLike[]): Issue[] {
  return issues.map((i) => {
    const issue: Issue = { message: i.message }
    const path = (i.path ?? []).map((p) => (typeof p.key === 'number' ? p.key : String(p.key)))
    if (path.length) issue.path = path
    if (typeof i.expected === 'string') issue.expected = i.expected
    if (typeof i.received === 'string') issue.received = i.received
    return issue
  })
}
