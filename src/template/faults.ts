/**
 * How template problems become `TeaError`s. Inside the lexer, parser and evaluator we throw two light internal
 * faults that know only a message and a character offset; the public boundary (`compileTemplate`, `render`)
 * turns them into a `TEMPLATE_SYNTAX` / `TEMPLATE_ERROR` whose `where` names the node, the field and the
 * template, so the hot path never has to carry that context around. The message says what is wrong and quotes
 * the template around the fault; the offset, and the line and column inside the template, are in `details`.
 */

import { isTeaError, TeaError, withWhere } from '../core/errors.ts'
import type { Where } from '../core/issues.ts'

/** Where a template lives in an agent file; both parts are optional for templates used outside an agent. */
export type TemplateSite = Pick<Where, 'node' | 'field'>

/** A problem found while lexing or parsing; `offset` indexes the template source. */
export class SyntaxFault extends Error {
  override readonly name = 'SyntaxFault'
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message)
  }
}

/** A problem found while rendering; `offset` is the start of the expression at fault, or -1. */
export class RenderFault extends Error {
  override readonly name = 'RenderFault'
  constructor(
    message: string,
    readonly offset: number,
    readonly hint?: string,
  ) {
    super(message)
  }
}

/**
 * A value read from a missing key (`state.n` unset, `state.a.b` with `state.a` unset) reached a place that needs a
 * value. A condition counts it as false (TEA agents test keys that may be unset); everywhere else it is an error.
 */
export class UndefinedFault extends RenderFault {}

/** A render about to build more text than `settings.max_template_bytes` allows. */
export class TooLargeFault extends RenderFault {
  constructor(
    readonly size: number,
    readonly limit: number,
  ) {
    super(
      `the template would build ${size > limit * 64 ? 'far ' : ''}more than its limit of ${limit} bytes of text (settings.max_template_bytes)`,
      -1,
      'raise settings.max_template_bytes if values this large are meant',
    )
  }
}

export const OPTIONAL_HINT = "if the value is optional, write `x | default('…')` or test `x is defined`"

const MAX_QUOTE = 160

export function toSyntaxError(e: unknown, template: string, site: TemplateSite | undefined): TeaError {
  const offset = e instanceof SyntaxFault ? e.offset : 0
  const message = e instanceof SyntaxFault ? e.message : `cannot compile template (${String(e)})`
  const { line, column } = lineColumn(template, offset)
  const at = line === 1 ? `column ${column}` : `line ${line}, column ${column}`
  return new TeaError('TEMPLATE_SYNTAX', `${message} at ${at} in ${quote(template, offset)}`, {
    where: whereOf(site, template),
    details: { offset, line, column },
  })
}

export function toRenderError(e: unknown, template: string, site: TemplateSite | undefined): TeaError {
  // A coded refusal from an output hook (a value that must not go into code) keeps its code; the place is added.
  if (isTeaError(e)) return withWhere(e, whereOf(site, template))
  const fault = e instanceof RenderFault
  const offset = fault ? e.offset : -1
  // Anything that is not our own fault (a RangeError from a pathological caller value, say) is still reported
  // as a coded template error: a render must never escape with an uncoded exception.
  const message = fault ? e.message : `template evaluation failed: ${e instanceof Error ? e.message : String(e)}`
  return new TeaError(e instanceof TooLargeFault ? 'TEMPLATE_TOO_LARGE' : 'TEMPLATE_ERROR', `${message} in ${quote(template, offset)}`, {
    cause: fault ? undefined : e,
    ...(fault && e.hint !== undefined ? { hint: e.hint } : {}),
    where: whereOf(site, template),
    ...(offset < 0 ? {} : { details: { offset } }),
    ...(e instanceof TooLargeFault && { details: { max_template_bytes: e.limit } }),
    ...(e instanceof UndefinedFault && { details: { ...(offset < 0 ? {} : { offset }), missing: true } }),
  })
}

function whereOf(site: TemplateSite | undefined, template: string): Where {
  return { node: site?.node, field: site?.field, template }
}

/** The template as a JSON string; a long one is cut to a window around the offset. */
function quote(template: string, offset: number): string {
  if (template.length <= MAX_QUOTE) return JSON.stringify(template)
  const center = offset < 0 ? 0 : offset
  const start = Math.max(0, Math.min(center - MAX_QUOTE / 2, template.length - MAX_QUOTE))
  const piece = template.slice(start, start + MAX_QUOTE)
  return `${start > 0 ? '…' : ''}${JSON.stringify(piece)}${start + MAX_QUOTE < template.length ? '…' : ''}`
}

export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1
  let lineStart = 0
  const end = Math.max(0, Math.min(offset, text.length))
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++
      lineStart = i + 1
    }
  }
  return { line, column: end - lineStart + 1 }
}
