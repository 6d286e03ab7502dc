/**
 * tea's template language: a sandboxed subset of Jinja, compiled to closures over a small AST (no `eval`).
 * See `compile-expr.ts` for the undefined rule and `access.ts` for the sandbox boundary.
 */

export { compileTemplate, type TemplateLimits } from './compile-template.ts'
export type { OutputHook } from './compile-expr.ts'
export { compileValue, type CompiledValue } from './compile-value.ts'
export { compileCondition, type Condition } from './compile-condition.ts'
export { referencedRoots } from './referenced-roots.ts'
export { DEFAULT_MAX_TEMPLATE_BYTES, truthy } from './values.ts'
