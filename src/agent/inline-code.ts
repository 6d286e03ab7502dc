/**
 * `settings.allow_inline_code: false` at load: code in any language anywhere in a node is refused. The actions check
 * again when they run, for code that arrives from state.
 */

import type { Registry } from '../actions/registry.ts'
import type { Where } from '../core/issues.ts'
import { isPlainObject } from '../core/util.ts'
import type { Problem } from './problems.ts'
import { LOWERED_LANGUAGE } from './tea-nodes.ts'

type Path = Array<string | number>

export const FORBIDDEN = 'run: code is forbidden by settings.allow_inline_code: false'

/**
 * With `allow_inline_code: false`, code anywhere in a node is refused when the file loads: a code-running action,
 * and a `run:` nested in its parameters (a `flow.steps` step, a plan's `subtask_executor`, a reflection loop's
 * generator or evaluator). The actions check again when they run, for code that arrives from state.
 */
export function forbidCode(
  n: Record<string, unknown>,
  actionName: string | undefined,
  registry: Registry,
  here: Path,
  node: { node: string },
  at: (path: Path, code: Problem['code'], message: string, where?: Where) => void,
): void {
  const language = (n as Record<symbol, unknown>)[LOWERED_LANGUAGE]
  // Named by a flag on the action, not by a list here: the core target must carry no engine's action names.
  const runsCode = (name: unknown): boolean => typeof name === 'string' && registry.get(name)?.runsCode === true
  if (typeof language === 'string' || runsCode(actionName)) {
    const what = typeof language === 'string' ? `run: code in ${language}` : `${actionName} runs code, which`
    at(
      typeof language === 'string' ? here : [...here, n.uses !== undefined ? 'uses' : 'action'],
      'INLINE_CODE_FORBIDDEN',
      `${what} is forbidden by settings.allow_inline_code: false`,
      node,
    )
    return
  }
  const stack: [unknown, Path][] = [
    [n.with, [...here, 'with']],
    [n.steps, [...here, 'steps']],
  ]
  while (stack.length) {
    const [v, path] = stack.pop()!
    if (Array.isArray(v)) v.forEach((x, i) => stack.push([x, [...path, i]]))
    else if (isPlainObject(v)) {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'run' && typeof x === 'string') at([...path, k], 'INLINE_CODE_FORBIDDEN', FORBIDDEN, node)
        else if (k === 'tools' && Array.isArray(x)) {
          // A model handed a code-running tool writes the code itself.
          x.forEach((t, i) => {
            const name = isPlainObject(t) ? (t.name ?? t.action) : t
            if (runsCode(name))
              at(
                [...path, k, i],
                'INLINE_CODE_FORBIDDEN',
                `the tool ${name} runs code, which settings.allow_inline_code: false forbids`,
                node,
              )
          })
        } else stack.push([x, [...path, k]])
      }
    }
  }
}
