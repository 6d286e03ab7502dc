/**
 * `compileValue`: compiles every string inside a JSON-like tree (a node's `with:` block, say). Each string gets
 * the field path it sits at (`with.messages[1].content`) so errors point at it. Static subtrees are returned as
 * they are, by reference, on every render; only the dynamic spine is rebuilt.
 */

import { compileTemplate, type TemplateLimits } from './compile-template.ts'
import type { TemplateSite } from './faults.ts'
import { isDict } from './values.ts'

export interface CompiledValue {
  static: boolean
  roots: ReadonlySet<string>
  render(scope: Record<string, unknown>): unknown
}

type Render = (scope: Record<string, unknown>) => unknown

export function compileValue(value: unknown, where?: TemplateSite, limits: TemplateLimits = {}): CompiledValue {
  const roots = new Set<string>()
  const render = compileNode(value, where?.node, where?.field, roots, limits)
  if (render === null) return { static: true, roots, render: () => value }
  return { static: false, roots, render }
}

/** A renderer, or null when the subtree holds no template syntax. */
function compileNode(
  value: unknown,
  node: string | undefined,
  field: string | undefined,
  roots: Set<string>,
  limits: TemplateLimits,
): Render | null {
  if (typeof value === 'string') {
    const t = compileTemplate(value, { node, field }, limits)
    if (t.static) return null
    for (const r of t.roots) roots.add(r)
    return t.render
  }
  if (Array.isArray(value)) {
    const items = value.map((v, i) => compileNode(v, node, `${field ?? ''}[${i}]`, roots, limits))
    if (items.every((r) => r === null)) return null
    return (scope) => {
      const out = new Array<unknown>(value.length)
      for (let i = 0; i < value.length; i++) {
        const r = items[i]
        out[i] = r === null || r === undefined ? value[i] : r(scope)
      }
      return out
    }
  }
  if (typeof value === 'object' && value !== null && isDict(value)) {
    const entries = Object.entries(value).map(
      ([k, v]) => [k, v, compileNode(v, node, field === undefined ? k : `${field}.${k}`, roots, limits)] as const,
    )
    if (entries.every(([, , r]) => r === null)) return null
    return (scope) => {
      const out: Record<string, unknown> = {}
      for (const [k, v, r] of entries) {
        const rendered = r === null ? v : r(scope)
        // A literal `__proto__` key from YAML must stay a plain key, not become the prototype.
        if (k === '__proto__') Object.defineProperty(out, k, { value: rendered, enumerable: true, writable: true, configurable: true })
        else out[k] = rendered
      }
      return out
    }
  }
  return null
}
