/**
 * `compileCondition`: the `if:` of a `goto` rule and TEA's edge `when:` / `condition:`. Accepts a bare expression
 * (`state.n > 3 and result.ok`) or a template. A missing key makes the condition false, as in Jinja — `state.flag`
 * unset, and also `state.n > 3` or `state.a.b == 1` while `state.n` or `state.a` is unset — because agents test
 * keys that may not be set yet. Anything else that fails raises `TEMPLATE_ERROR` (upstream counted every render
 * error as false, which silently routed runs down the fallback): an unknown name (`stat.n`, a typo), comparing
 * values of different types, a filter's error.
 * A text template (not a single `{{ expr }}`) is rendered and read as upstream did: '', 'false', '0', 'no',
 * 'none' (any case, trimmed) are false, any other text is true.
 */

import { compileTemplate, type TemplateLimits } from './compile-template.ts'
import { compileExpr, type Slots } from './compile-expr.ts'
import { isTeaError } from '../core/errors.ts'
import { toRenderError, toSyntaxError, UndefinedFault, type TemplateSite } from './faults.ts'
import { parseWholeExpression } from './parse.ts'
import { TokenStream } from './token-stream.ts'
import { lexTag } from './tokens.ts'
import { budget, DEFAULT_MAX_TEMPLATE_BYTES, truthy } from './values.ts'

export type Condition = (scope: Record<string, unknown>) => boolean

const FALSE_WORDS = ['', 'false', '0', 'no', 'none']

export function compileCondition(expr: string | boolean, where?: TemplateSite, limits: TemplateLimits = {}): Condition {
  if (typeof expr === 'boolean') return () => expr
  const source = String(expr)
  if (/\{[{%#]/.test(source)) {
    const t = compileTemplate(source, where, limits)
    const render = (scope: Record<string, unknown>): unknown => {
      try {
        return t.render(scope)
      } catch (e) {
        if (isTeaError(e) && (e.details as { missing?: boolean } | undefined)?.missing === true) return false
        throw e
      }
    }
    if (t.native) return (scope) => truthy(render(scope))
    return (scope) => !FALSE_WORDS.includes(String(render(scope)).trim().toLowerCase())
  }
  let ev
  try {
    const ts = new TokenStream(lexTag(source, 0, null, 0).tokens)
    ev = compileExpr(parseWholeExpression(ts), { src: source, locals: new Map(), slotCount: 1, roots: new Set() })
  } catch (e) {
    throw toSyntaxError(e, source, where)
  }
  const noSlots: Slots = []
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_TEMPLATE_BYTES
  return (scope) => {
    const outer = budget.bytes
    budget.bytes = maxBytes
    try {
      return truthy(ev(scope, noSlots))
    } catch (e) {
      if (e instanceof UndefinedFault) return false
      throw toRenderError(e, source, where)
    } finally {
      budget.bytes = outer
    }
  }
}
