/**
 * Assertions the tests share: what a call threw, and that it threw a TeaError with a given code. A call that
 * succeeds where a failure was expected fails the test with a message saying so.
 */
import * as assert from 'uvu/assert'
import { type ErrorCode, type TeaError, errorMessage, isTeaError } from '../../src/core/errors.ts'

/** A promise, or a function that may throw or return one (a synchronous action result is awaited as is). */
type Attempt = unknown

/** What `attempt` (a promise, or a function that may throw or return one) threw or rejected with. */
export async function rejection(attempt: Attempt): Promise<unknown> {
  try {
    await (typeof attempt === 'function' ? attempt() : attempt)
  } catch (e) {
    return e
  }
  return assert.unreachable('expected a failure, but it succeeded')
}

/** What `attempt` failed with, which must be a TeaError (anything else is rethrown: a bug, not a coded failure). */
export async function teaRejection(attempt: Attempt): Promise<TeaError> {
  const e = await rejection(attempt)
  if (!isTeaError(e)) throw e
  return e
}

/** What `fn` threw, synchronously. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn()
  } catch (e) {
    return e
  }
  return assert.unreachable('expected a throw')
}

/**
 * The TeaError `attempt` failed with, after checking its code and that its text (`errorMessage`: place, message
 * and issues) mentions each of `mentions`.
 */
export async function rejects(attempt: Attempt, code: ErrorCode, ...mentions: string[]): Promise<TeaError> {
  return isCoded(await rejection(attempt), code, mentions)
}

/** `thrown` for a TeaError with `code`, as `rejects` checks it. */
export function throwsCode(fn: () => unknown, code: ErrorCode, ...mentions: string[]): TeaError {
  return isCoded(thrown(fn), code, mentions)
}

function isCoded(e: unknown, code: ErrorCode, mentions: string[]): TeaError {
  assert.ok(isTeaError(e, code), `expected a TeaError ${code}, got ${isTeaError(e) ? e.code : ''} ${errorMessage(e)}`)
  const text = errorMessage(e)
  for (const m of mentions) assert.ok(text.includes(m), `'${text}' should mention ${m}`)
  return e
}
