/**
 * One error class for everything tea reports on purpose. Callers branch on `code` (a stable string) through
 * `isTeaError`, never on `instanceof`, because a bundle or a worker thread may hold a second copy of this class.
 * `name` is set explicitly: minification renames classes.
 */

export type ErrorCode =
  | 'USAGE'
  | 'YAML_SYNTAX'
  | 'AGENT_INVALID'
  | 'UNKNOWN_KEY'
  | 'MISSING_KEY'
  | 'DUPLICATE_NODE'
  | 'UNKNOWN_NODE'
  | 'UNKNOWN_ACTION'
  | 'INVALID_PARAMS'
  | 'INVALID_INPUT'
  | 'TEMPLATE_SYNTAX'
  | 'TEMPLATE_ERROR'
  | 'NODE_FAILED'
  | 'NODE_TIMEOUT'
  | 'CODE_ERROR'
  | 'INLINE_CODE_FORBIDDEN'
  | 'NO_ROUTE'
  | 'MAX_STEPS_EXCEEDED'
  | 'LLM_UNREACHABLE'
  | 'LLM_TIMEOUT'
  | 'LLM_HTTP_ERROR'
  | 'LLM_BAD_RESPONSE'
  | 'LLM_BAD_MODEL'
  | 'CASSETTE_MISS'
  | 'CASSETTE_INVALID'
  | 'HTTP_ERROR'
  | 'HTTP_TIMEOUT'
  | 'FILE_ERROR'
  | 'PATH_OUTSIDE_WORKSPACE'
  | 'JSON_PARSE_ERROR'
  | 'STORE_ERROR'
  | 'STORE_NOT_WRITABLE'
  | 'CHECKPOINT_CORRUPT'
  | 'RUN_NOT_FOUND'
  | 'RUN_EXISTS'
  | 'RUN_NOT_RESUMABLE'
  | 'AGENT_CHANGED'
  | 'PLAN_INVALID'
  | 'PLAN_CYCLE'
  | 'PLAN_PARSE_ERROR'
  | 'MAX_REPLANS_EXCEEDED'
  | 'SUBTASK_FAILED'
  | 'SUBTASK_TIMEOUT'
  | 'POOL_ERROR'
  | 'AOF_INVALID'
  | 'AOF_NOT_FOUND'
  | 'AOF_TRANSITION'
  | 'AOF_LOCKED'
  | 'BUILD_ERROR'
  | 'NATIVE_LOAD_FAILED'
  | 'CACHE_DIR_UNUSABLE'
  | 'INTERNAL'

export interface TeaErrorOptions {
  cause?: unknown
  /** Structured context for programs (`--stream` error events, `--json` output). */
  details?: Record<string, unknown>
  /** A one-line fix, shown after the message. */
  hint?: string
}

export class TeaError extends Error {
  override readonly name = 'TeaError'
  readonly code: ErrorCode
  readonly details: Record<string, unknown> | undefined
  readonly hint: string | undefined

  constructor(code: ErrorCode, message: string, options: TeaErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.details = options.details && printable(options.details)
    this.hint = options.hint
  }

  toJSON(): Record<string, unknown> {
    return { code: this.code, message: this.message, ...(this.hint ? { hint: this.hint } : {}), ...this.details }
  }
}

/**
 * uvu's failure printer calls `err.details.split('\n')`, assuming the string its own assertions carry; an object
 * there made it throw inside a `finally` that swallowed the failure, so a test failing with a TeaError passed
 * silently. A non-enumerable `split` keeps the printer working; spreading, JSON and structuredClone ignore it.
 */
function printable(details: Record<string, unknown>): Record<string, unknown> {
  if (Object.isExtensible(details)) Object.defineProperty(details, 'split', { value: () => [JSON.stringify(details)], enumerable: false, configurable: true })
  return details
}

export function isTeaError(e: unknown, code?: ErrorCode): e is TeaError {
  if (typeof e !== 'object' || e === null) return false
  const err = e as { name?: unknown; code?: unknown }
  return err.name === 'TeaError' && typeof err.code === 'string' && (code === undefined || err.code === code)
}

/** The message of anything thrown, without a stack. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message
  return typeof e === 'string' ? e : JSON.stringify(e)
}
