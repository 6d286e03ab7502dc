/**
 * `compileTemplate`: parse once, render many times. Three shapes, decided at compile time:
 * - static: no template syntax at all; `render` returns the source (free);
 * - native: exactly one `{{ expr }}`, whitespace around it ignored; `render` returns the expression's value
 *   itself (a list stays a list, a number a number) — by reference, not copied;
 * - text: everything else; `render` returns a string.
 * Syntax problems throw `TEMPLATE_SYNTAX` here; runtime problems throw `TEMPLATE_ERROR` from `render`. Both
 * name the node, the field and the template.
 */

import type { Stmt } from './ast.ts'
import { compileBody, ITERATION_SLOT } from './compile-body.ts'
import { compileExpr, undefinedFault, type CompileContext, type Eval, type OutputHook, type Scope, type Slots } from './compile-expr.ts'
import { toRenderError, toSyntaxError, type TemplateSite } from './faults.ts'
import { parseTemplate } from './parse.ts'
import { isStaticText, scanTemplate } from './scan.ts'
import { budget, DEFAULT_MAX_TEMPLATE_BYTES } from './values.ts'

/** What one render may spend. */
export interface TemplateLimits {
  /** Most text a render may build (`settings.max_template_bytes`); default 1 MiB. */
  maxBytes?: number
  /** Prints each `{{ }}` (code templates); with it a template always renders text, never a native value. */
  output?: OutputHook
  /**
   * A key missing from a dict reads as none, not undefined (TEA's DotDict): for files written for TEA (the loader
   * decides, agent/references.ts). Printing it gives '', as none prints; `default` and `is defined` still see it
   * as missing.
   */
  missingIsNone?: boolean
}

export interface CompiledTemplate {
  source: string
  /** Exactly one `{{ expr }}` (after trimming whitespace): `render` yields the native value. */
  native: boolean
  /** No template syntax at all: `render` returns `source`. */
  static: boolean
  /** Top-level names the template reads (`state`, `result`, …); loop variables excluded. */
  roots: ReadonlySet<string>
  render(scope: Record<string, unknown>): unknown
}

export function compileTemplate(source: string, where?: TemplateSite, limits: TemplateLimits = {}): CompiledTemplate {
  if (typeof source !== 'string') throw new TypeError('compileTemplate expects a string')
  if (isStaticText(source)) return { source, native: false, static: true, roots: new Set(), render: () => source }
  const cx: CompileContext = { src: source, locals: new Map(), slotCount: ITERATION_SLOT + 1, roots: new Set() }
  if (limits.output) cx.output = limits.output
  if (limits.missingIsNone) cx.missingIsNone = true
  let body: Stmt[]
  let ev: Eval | null = null
  let emit: ((s: Scope, l: Slots) => string) | null = null
  try {
    body = parseTemplate(scanTemplate(source))
    const only = limits.output ? null : nativeExpression(body)
    if (only !== null) ev = compileExpr(only, cx)
    else emit = compileBody(body, cx)
  } catch (e) {
    throw toSyntaxError(e, source, where)
  }
  const roots = cx.roots
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_TEMPLATE_BYTES
  if (ev !== null) return nativeTemplate(source, ev, body, roots, maxBytes, where)
  const slotCount = cx.slotCount
  const noSlots: Slots = []
  const run = emit!
  return {
    source,
    native: false,
    static: false,
    roots,
    render(scope) {
      const outer = budget.bytes
      budget.bytes = maxBytes
      try {
        return run(scope, slotCount > ITERATION_SLOT + 1 ? new Array(slotCount) : noSlots)
      } catch (e) {
        throw toRenderError(e, source, where)
      } finally {
        budget.bytes = outer
      }
    },
  }
}

function nativeTemplate(
  source: string,
  ev: Eval,
  body: Stmt[],
  roots: ReadonlySet<string>,
  maxBytes: number,
  where?: TemplateSite,
): CompiledTemplate {
  const expr = nativeExpression(body)!
  const exprText = source.slice(expr.s, expr.e)
  const noSlots: Slots = []
  return {
    source,
    native: true,
    static: false,
    roots,
    render(scope) {
      let v: unknown
      const outer = budget.bytes
      budget.bytes = maxBytes
      try {
        v = ev(scope, noSlots)
      } catch (e) {
        throw toRenderError(e, source, where)
      } finally {
        budget.bytes = outer
      }
      if (v === undefined) throw toRenderError(undefinedFault(exprText, expr.s), source, where)
      return v
    },
  }
}

function nativeExpression(body: Stmt[]): Extract<Stmt, { k: 'out' }>['expr'] | null {
  const inner = body.filter((st) => !(st.k === 'text' && st.value.trim() === ''))
  if (inner.length !== 1 || inner[0]!.k !== 'out') return null
  return inner[0]!.expr
}
