/**
 * Compiles statements into emitters: closures that return the text of their part of the template. Loops keep
 * their variables and their `loop` object in slots of the per-render array; slot 0 counts loop iterations
 * across the render, so nested loops over large data stop with an error instead of running for hours.
 */

import type { Stmt } from './ast.ts'
import { RenderFault } from './faults.ts'
import {
  compileExpr,
  defined,
  located,
  undefinedFault,
  type CompileContext,
  type Eval,
  type OutputHook,
  type Scope,
  type Slots,
} from './compile-expr.ts'
import { checkSize, isDict, toText, truthy, typeName } from './values.ts'

export type Emit = (s: Scope, l: Slots) => string

export const MAX_ITERATIONS = 1_000_000
/** Slot 0 of every render's slot array: the running iteration count. */
export const ITERATION_SLOT = 0

export function compileBody(body: Stmt[], cx: CompileContext): Emit {
  const parts = body.map((st) => compileStmt(st, cx))
  if (parts.length === 0) return () => ''
  if (parts.length === 1) return parts[0]!
  if (parts.length === 2) {
    const [a, b] = parts as [Emit, Emit]
    return (s, l) => {
      const out = a(s, l) + b(s, l)
      checkSize(out.length)
      return out
    }
  }
  return (s, l) => {
    let out = ''
    for (let i = 0; i < parts.length; i++) {
      out += parts[i]!(s, l)
      checkSize(out.length)
    }
    return out
  }
}

function compileStmt(st: Stmt, cx: CompileContext): Emit {
  switch (st.k) {
    case 'text': {
      const v = st.value
      return () => v
    }
    case 'out':
      return compileOutput(compileExpr(st.expr, cx), cx.src.slice(st.expr.s, st.expr.e), st.expr.s, cx.output)
    case 'if': {
      const tests = st.branches.map((b) => compileExpr(b.test, cx))
      const bodies = st.branches.map((b) => compileBody(b.body, cx))
      const alt = st.else === null ? () => '' : compileBody(st.else, cx)
      return (s, l) => {
        for (let i = 0; i < tests.length; i++) if (truthy(tests[i]!(s, l))) return bodies[i]!(s, l)
        return alt(s, l)
      }
    }
    case 'for':
      return compileFor(st, cx)
  }
}

export function compileOutput(ev: Eval, exprText: string, at: number, hook?: OutputHook): Emit {
  const print = (v: unknown): string => {
    if (typeof v === 'string') return v
    try {
      return toText(v)
    } catch (err) {
      throw located(err, `printing '${exprText}'`, at)
    }
  }
  if (hook) {
    return (s, l) => {
      const v = ev(s, l)
      if (v === undefined) throw undefinedFault(exprText, at)
      return hook(v, at, () => print(v))
    }
  }
  return (s, l) => {
    const v = ev(s, l)
    if (v === undefined) throw undefinedFault(exprText, at)
    return print(v)
  }
}

interface LoopInfo {
  index: number
  index0: number
  revindex: number
  revindex0: number
  first: boolean
  last: boolean
  length: number
}

function compileFor(st: Extract<Stmt, { k: 'for' }>, cx: CompileContext): Emit {
  const iter = defined(st.iter, cx)
  const iterText = cx.src.slice(st.iter.s, st.iter.e)
  const outer = cx.locals
  cx.locals = new Map(outer)
  const targetSlots = st.targets.map((name) => {
    const slot = cx.slotCount++
    cx.locals.set(name, slot)
    return slot
  })
  const filter = st.filter === null ? null : compileExpr(st.filter, cx)
  const loopSlot = cx.slotCount++
  cx.locals.set('loop', loopSlot)
  const body = compileBody(st.body, cx)
  cx.locals = outer
  const alt = st.else === null ? () => '' : compileBody(st.else, cx)
  const unpack = targetSlots.length > 1

  const bind = (l: Slots, item: unknown): void => {
    if (!unpack) {
      l[targetSlots[0]!] = item
      return
    }
    if (!Array.isArray(item) || item.length !== targetSlots.length) {
      throw new RenderFault(`cannot unpack a ${typeName(item)} into ${targetSlots.length} loop variables`, st.s)
    }
    for (let i = 0; i < targetSlots.length; i++) l[targetSlots[i]!] = item[i]
  }

  return (s, l) => {
    let items = iterable(iter(s, l), iterText, st.s)
    if (filter !== null) items = items.filter((item) => (count(l, st.s), bind(l, item), truthy(filter(s, l))))
    if (items.length === 0) return alt(s, l)
    const n = items.length
    const loop: LoopInfo = { index: 1, index0: 0, revindex: n, revindex0: n - 1, first: true, last: n === 1, length: n }
    l[loopSlot] = loop
    let out = ''
    for (let i = 0; i < n; i++) {
      count(l, st.s)
      bind(l, items[i])
      loop.index = i + 1
      loop.index0 = i
      loop.revindex = n - i
      loop.revindex0 = n - i - 1
      loop.first = i === 0
      loop.last = i === n - 1
      out += body(s, l)
      checkSize(out.length)
    }
    return out
  }
}

function count(l: Slots, at: number): void {
  const n = ((l[ITERATION_SLOT] as number | undefined) ?? 0) + 1
  if (n > MAX_ITERATIONS) throw new RenderFault(`loops ran more than ${MAX_ITERATIONS} iterations in one render`, at)
  l[ITERATION_SLOT] = n
}

function iterable(v: unknown, text: string, at: number): unknown[] {
  if (Array.isArray(v)) return v
  if (typeof v === 'string') return [...v]
  if (typeof v === 'object' && v !== null && isDict(v)) return Object.keys(v)
  throw new RenderFault(`cannot loop over '${text}': it is a ${typeName(v)}, not a list, dict or string`, at)
}
