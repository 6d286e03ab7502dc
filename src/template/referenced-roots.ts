import { compileTemplate, type CompiledTemplate } from './compile-template.ts'

/** The top-level names a template reads (`state`, `result`, …), for the agent validator. */
export function referencedRoots(template: string | CompiledTemplate): Set<string> {
  const t = typeof template === 'string' ? compileTemplate(template) : template
  return new Set(t.roots)
}
