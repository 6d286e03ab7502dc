/**
 * `compileCondition`: the `if:` of a `goto` rule. Accepts a bare expression (`state.n > 3 and result.ok`) or a
 * template. A condition that fails to evaluate raises `TEMPLATE_ERROR` — upstream counted render errors as
 * false, which silently routed runs down the fallback. A missing key is simply false (`state.flag` unset).
 * A text template (not a single `{{ expr }}`) is rendered and read as upstream did: '', 'false', '0', 'no',
 * 'none' (any case, trimmed) are false, any other text is true.
 */

import { compileTemplate, type TemplateLimits } from './compile-template.ts'
import { compileExpr, type Slots } from './compile-expr.ts'
import { toRenderError, toSyntaxError, type TemplateSite } from './faults.ts'
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
    if (t.native) return (scope) => truthy(t.render(scope))
    return (scope) => !FALSE_WORDS.includes(String(t.render(scope)).trim().toLowerCase())
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
      throw toRenderError(e, source, where)
    } finally {
      budget.bytes = outer
    }
  }
}
