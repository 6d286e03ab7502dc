/**
 * One error class for everything tea reports on purpose. Callers branch on `code` (a stable string) through
 * `isTeaError`, never on `instanceof`, because a bundle or a worker thread may hold a second copy of this class.
 * `name` is set explicitly: minification renames classes. An error carries its data — where it happened and every
 * issue — as fields, and `errorMessage` composes the human text from them once (see issues.ts).
 */

import { compactWhere, formatIssue, formatWhere, type Issue, type Where } from './issues.ts'

/**
 * Every code, what it means, and how the CLI exits on it: `usage` (2) when the command line, the input or the agent
 * file is wrong and nothing ran, `failure` (1) when something was tried and failed. One table, read by the CLI's
 * one error handler (src/cli/main.ts) and by every subcommand.
 */
export const ERROR_CODES = {
  USAGE: ['usage', 'the command line is wrong: an unknown flag, a missing argument, a bad value'],
  YAML_SYNTAX: ['usage', 'the agent file is not valid YAML'],
  AGENT_INVALID: ['usage', 'the agent file does not describe a valid agent'],
  TEA_UNSUPPORTED: ['usage', 'a TEA key or action that tea does not provide (docs/tea-compat.md)'],
  UNKNOWN_KEY: ['usage', 'the agent file has a key the format does not know'],
  MISSING_KEY: ['usage', 'the agent file lacks a required key'],
  DUPLICATE_NODE: ['usage', 'two nodes share a name'],
  UNKNOWN_NODE: ['failure', 'a node name that the agent does not have'],
  UNKNOWN_ACTION: ['failure', 'an action this build does not have'],
  INVALID_PARAMS: ['failure', "an action's parameters do not match its schema"],
  INVALID_INPUT: ['usage', 'the run input (-i, --set) is not what it must be'],
  INPUT_TOO_DEEP: ['usage', 'a JSON value nested deeper than tea reads (docs/security.md: limits)'],
  STATE_TOO_DEEP: ['failure', 'a node returned a value nested deeper than tea stores (docs/security.md: limits)'],
  INPUT_TOO_LARGE: ['usage', 'a JSON text larger than tea reads at that entry point (docs/security.md: limits)'],
  TEMPLATE_SYNTAX: ['usage', 'a template does not parse'],
  TEMPLATE_ERROR: ['failure', 'a template failed while rendering'],
  TEMPLATE_TOO_LARGE: ['failure', 'a template built a value larger than settings.limits.template_bytes'],
  NODE_FAILED: ['failure', 'a node failed with an error that had no code of its own'],
  NODE_TIMEOUT: ['failure', 'a node or its run: code ran over its time limit'],
  CODE_ERROR: ['failure', 'run: code does not compile, threw, or returned something other than an object'],
  INLINE_CODE_FORBIDDEN: ['failure', 'run: code in an agent whose settings forbid it'],
  CODE_TEMPLATE_UNSAFE: ['failure', 'a {{ }} inside run: code would put text into the source outside a string literal'],
  NODE_MEMORY_LIMIT: ['failure', 'run: code went over its memory limit (settings.run_memory_mb)'],
  NO_ROUTE: ['failure', 'no goto rule matched and there is no fallback rule'],
  MAX_STEPS_EXCEEDED: ['failure', 'the run reached settings.max_steps'],
  LLM_UNREACHABLE: ['failure', 'the model server cannot be reached'],
  LLM_TIMEOUT: ['failure', 'a model call ran over its timeout'],
  LLM_HTTP_ERROR: ['failure', 'the model server answered with an HTTP error'],
  LLM_BAD_RESPONSE: ['failure', "the model server's reply cannot be used"],
  LLM_STREAM_CUT: ['failure', 'the model server closed a streamed reply before its end'],
  LLM_REPLY_TOO_LARGE: ['failure', 'a model reply was larger than settings.llm.max_reply_bytes'],
  RUN_TIMEOUT: ['failure', 'a run reached its time limit (config.max_execution_time)'],
  LLM_BAD_MODEL: ['usage', 'a model string tea cannot resolve'],
  LLM_CONTEXT_OVERFLOW: ['failure', "a prompt longer than the model's context (settings.llm.n_ctx of a GGUF model)"],
  GGUF_NOT_FOUND: ['failure', 'a GGUF model file that does not exist or cannot be read'],
  GGUF_NOT_GGUF: ['failure', 'a model file that is not a GGUF'],
  GGUF_TRUNCATED: ['failure', 'a GGUF model file cut short (an unfinished copy)'],
  GGUF_INVALID: ['failure', 'a GGUF model file whose header is damaged'],
  GGUF_UNSUPPORTED_ARCH: ['failure', "a GGUF model of an architecture this build's llama.cpp does not run"],
  GGUF_TOO_LARGE: ['failure', 'a GGUF model that needs more memory than is free'],
  SHELL_PERMISSIONS_OFF: ['usage', "a warning: an agent's own shell provider switches its CLI's permission checks off (docs/security.md)"],
  LLM_SHELL_ERROR: ['failure', 'a shell provider (a command-line model) could not start or exited with an error'],
  CASSETTE_MISS: ['failure', 'no recorded exchange in the cassette matches a model call'],
  CASSETTE_INVALID: ['usage', 'the cassette file cannot be read'],
  HTTP_ERROR: ['failure', 'an http.* request failed'],
  HTTP_TIMEOUT: ['failure', 'an http.* request ran over its timeout'],
  HTTP_DESTINATION_DENIED: ['failure', 'an outbound request to an address the destination policy refuses (settings.http.allow)'],
  HTTP_REDIRECT_LIMIT: ['failure', 'an outbound request was redirected more often than allowed'],
  MCP_SERVER_ERROR: ['failure', 'an MCP server could not be started or reached, ended, or answered with something that is not MCP'],
  MCP_TIMEOUT: ['failure', 'an MCP server did not answer within its timeout'],
  MCP_REPLY_TOO_LARGE: ['failure', "an MCP server's reply or tool list was larger than tea reads (docs/integrations.md)"],
  FILE_ERROR: ['failure', 'a file.* action failed'],
  PATH_OUTSIDE_WORKSPACE: ['failure', "a file.* path leads outside the agent's workspace"],
  JSON_PARSE_ERROR: ['failure', 'json.parse found no JSON'],
  STORE_ERROR: ['failure', 'the store failed to read or write'],
  STORE_NOT_WRITABLE: ['failure', 'the data dir cannot be written'],
  CHECKPOINT_CORRUPT: ['failure', 'a checkpoint record cannot be decoded or fails its checksum'],
  STORE_CORRUPT: ['failure', 'the store file (tea.lmdb) is damaged or truncated'],
  STORE_FULL: ['failure', 'the disk holding the data dir is full'],
  COLLECTION_NOT_FOUND: ['failure', 'a vector or full-text collection that nothing was stored in (vector.query, vector.delete)'],
  COLLECTION_MISMATCH: ['failure', "vectors from another embedding model or of another dimension than the collection's"],
  DOCUMENT_INVALID: ['failure', 'a document or vector a collection cannot take: empty, too large, NaN or infinite values'],
  RUN_NOT_FOUND: ['usage', 'no run with that id in the data dir'],
  RUN_EXISTS: ['usage', 'a run with that id exists already'],
  RUN_NOT_RESUMABLE: ['usage', 'the run completed, or is running in another process'],
  RESUME_LIMIT: [
    'failure',
    'the run was in flight each time its process died, as often as auto-resume allows: it is no longer resumed by itself',
  ],
  AGENT_CHANGED: ['failure', 'a warning: the agent file changed since the run started'],
  REFLECTION_FAILED: ['failure', 'no output of a reflection.loop passed its evaluation (on_failure: raise)'],
  REASONING_PARSE_ERROR: ['failure', "a model's reply holds no usable reasoning step or answer"],
  PLAN_INVALID: ['failure', 'a plan does not have the shape of a plan'],
  PLAN_CYCLE: ['failure', 'the dependencies of a plan form a cycle'],
  PLAN_PARSE_ERROR: ['failure', "the planner's reply holds no usable plan"],
  MAX_REPLANS_EXCEEDED: ['failure', 'the plan was revised as often as allowed'],
  SUBTASK_TIMEOUT: ['failure', 'a plan subtask ran over its timeout'],
  POOL_ERROR: ['failure', 'the worker pool failed to run a task'],
  AOF_INVALID: ['failure', 'an AOF task file or message is not valid'],
  AOF_NOT_FOUND: ['failure', 'no AOF task with that id'],
  AOF_TRANSITION: ['failure', 'the AOF transition table does not allow that move'],
  AOF_LOCKED: ['failure', 'the AOF task lock could not be taken in time'],
  NATS_CONNECT: ['failure', 'the NATS server cannot be reached or refused the connection'],
  MQTT_CONNECT: ['failure', 'the MQTT broker cannot be reached, refused the connection, or did not take a message'],
  NATIVE_LOAD_FAILED: ['failure', "lmdb's native addon could not be loaded"],
  CACHE_DIR_UNUSABLE: ['failure', 'the cache dir cannot hold executable files'],
  SERVE_RUNNING: ['failure', 'another tea serve owns the data dir'],
  AGENT_NOT_FOUND: [
    'usage',
    'no agent file at that path (a folder, a missing or unreadable file), or of that name in the agents folder (tea serve)',
  ],
  PATH_OUTSIDE_AGENTS: ['usage', 'an agent path that leads outside the agents folder (tea serve)'],
  HOST_NOT_ALLOWED: ['usage', 'a request whose Host header names no address tea serve listens on (--allow-host)'],
  ORIGIN_NOT_ALLOWED: ['usage', "a state-changing request from another page's origin (tea serve)"],
  UNSUPPORTED_MEDIA_TYPE: ['usage', 'a state-changing request whose body is not Content-Type: application/json (tea serve)'],
  BAD_REQUEST: ['usage', 'an HTTP request tea serve cannot read: malformed JSON, a body of the wrong shape'],
  NOT_FOUND: ['usage', 'no such route (tea serve)'],
  UNAUTHORIZED: ['usage', 'a request without the right bearer token (tea serve)'],
  BODY_TOO_LARGE: ['usage', 'a request body over the size limit (tea serve)'],
  LOW_MEMORY: ['failure', "free memory is below tea serve's --min-free-mb: the run was not started"],
  RUN_NOT_ACTIVE: ['usage', 'the run is not in a state that allows this (tea serve: cancel a run that is not running)'],
  INTERNAL: ['failure', 'a bug in tea'],
} as const satisfies Record<string, readonly ['usage' | 'failure', string]>

export type ErrorCode = keyof typeof ERROR_CODES

/** Whether the CLI exits 2 (`usage`) or 1 (`failure`) on an error with this code. */
export function exitKind(code: string): 'usage' | 'failure' {
  return Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as ErrorCode][0] : 'failure'
}

export interface TeaErrorOptions {
  cause?: unknown
  /** Where it happened, structured; the message never repeats it (`errorMessage` composes the two). */
  where?: Where
  /** Everything that is wrong, each with its path (a validation error lists them all). */
  issues?: Issue[]
  /** Other structured context for programs (`--stream` error events, `--json` output). */
  details?: Record<string, unknown>
  /** A one-line fix, shown after the message. */
  hint?: string
}

export class TeaError extends Error {
  override readonly name = 'TeaError'
  readonly code: ErrorCode
  readonly where: Where | undefined
  readonly issues: Issue[] | undefined
  readonly details: Record<string, unknown> | undefined
  readonly hint: string | undefined

  /** `message` says what is wrong, without the place: that goes in `options.where`. */
  constructor(code: ErrorCode, message: string, options: TeaErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.where = compactWhere(options.where)
    this.issues = options.issues?.length ? options.issues : undefined
    this.details = options.details
    this.hint = options.hint
  }

  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      ...(this.hint ? { hint: this.hint } : {}),
      ...(this.where ? { where: this.where } : {}),
      ...(this.issues ? { issues: this.issues } : {}),
      ...this.details,
    }
  }
}

/**
 * `e` again, at a place its thrower did not know (the node a template failed in, the subtask some code ran for):
 * the same code, message, issues, details and hint, with `where` filling in what `e.where` leaves unset. This is
 * how a layer adds a location on the way up, instead of editing the message. `e` may be a TeaError that crossed a
 * thread as a plain record (same fields).
 */
export function withWhere(e: TeaError, where: Where | undefined): TeaError {
  if (!where) return e
  return new TeaError(e.code, e.message, {
    cause: e,
    where: { ...where, ...compactWhere(e.where) },
    ...(e.issues && { issues: e.issues }),
    ...(e.details && { details: e.details }),
    ...(e.hint && { hint: e.hint }),
  })
}

export function isTeaError(e: unknown, code?: ErrorCode): e is TeaError {
  if (typeof e !== 'object' || e === null) return false
  const err = e as { name?: unknown; code?: unknown }
  return err.name === 'TeaError' && typeof err.code === 'string' && (code === undefined || err.code === code)
}

/**
 * The human text of anything thrown, without a stack: for an error with a place, the place and then the message
 * (`node 'x' (llm.call), with.prompt: 'state.q' is undefined …`), and its issues one per line after it. This is
 * the one formatter the CLI prints and `--stream` readers can apply to an `error` event's `error` (the same fields
 * as JSON: `toJSON()` keeps `where` and `issues`).
 */
export function errorMessage(e: unknown): string {
  if (typeof e === 'string') return e
  if (typeof e === 'object' && e !== null && typeof (e as { message?: unknown }).message === 'string') {
    const { message, where, issues } = e as { message: string; where?: Where; issues?: unknown }
    const at = formatWhere(where)
    const list = Array.isArray(issues) && issues.length ? `:${issues.map((i: Issue) => `\n  ${formatIssue(i)}`).join('')}` : ''
    return `${at ? `${at}: ` : ''}${message}${list}`
  }
  return JSON.stringify(e) ?? String(e)
}

/**
 * Anything thrown as one issue, for a report that lists problems and goes on (`aof lint`, a task listing): a
 * TeaError's code, its message with its issues, and its place as `where`; anything else as its message.
 */
export function errorIssue(e: unknown): Issue {
  if (!isTeaError(e)) return { message: errorMessage(e) }
  return { code: e.code, message: errorMessage({ message: e.message, issues: e.issues }), ...(e.where && { where: e.where }) }
}
