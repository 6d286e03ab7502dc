/**
 * Helpers shared by the `file.*` confinement tests: run an action as the engine would (parameters validated and
 * defaulted first), and expect a coded TeaError.
 */

import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { errorMessage, isTeaError, type ErrorCode } from '../../../src/core/errors.ts'
import { fileActions } from '../../../src/actions/file/index.ts'
import type { ActionContext } from '../../../src/actions/types.ts'

export async function runFileAction(ctx: ActionContext, name: string, params: unknown): Promise<Record<string, unknown>> {
  const action = fileActions.find((a) => a.name === name)
  if (!action) throw new Error(`no action ${name}`)
  return action.run(v.parse(action.params, params), ctx) as Promise<Record<string, unknown>>
}

/**
 * `runFileAction` for a call that must succeed. A failure is rethrown as a plain Error: uvu 0.5's reporter itself
 * throws on an error whose `details` is an object (a TeaError's is), which hides the failing test when the file
 * runs without `scripts/test.mjs`'s preload (test/support/uvu-details.ts), as `uvu -r tsx test/actions/file …` does.
 */
export async function expectOk(ctx: ActionContext, name: string, params: unknown): Promise<Record<string, unknown>> {
  try {
    return await runFileAction(ctx, name, params)
  } catch (e) {
    throw new Error(`${name} ${JSON.stringify(params)} should succeed, but failed: ${errorMessage(e)}`)
  }
}

/** Awaits `p`, expects a TeaError with `code` whose message mentions each of `mentions`; returns the message. */
export async function rejectsWith(p: Promise<unknown>, code: ErrorCode, ...mentions: string[]): Promise<string> {
  try {
    await p
  } catch (e) {
    assert.ok(isTeaError(e, code), `expected ${code}, got ${String(e)}`)
    for (const m of mentions) assert.ok((e as Error).message.includes(m), `'${(e as Error).message}' should mention ${m}`)
    return (e as Error).message
  }
  assert.unreachable(`expected a ${code} error, but it resolved`)
  return ''
}
