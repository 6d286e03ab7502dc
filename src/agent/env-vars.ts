/**
 * `${VAR}` and `${VAR:-default}` in settings, as TEA expands them: from the environment, when the agent is loaded,
 * in every string under `settings:` (TEA expands its `ltm`, `secrets`, trace and provider sections; tea expands
 * them all, so `settings.llm.model: ${MODEL:-ollama:qwen2.5:1.5b}` works too). An unset variable without a
 * default is a load error naming it and its place, never literal text sent on to a model or a server. `$${VAR}`
 * keeps a literal `${VAR}`. Elsewhere (prompts, `with:`, `run:`) `${…}` is text: templates use `{{ … }}`.
 */

import type { Problem } from './problems.ts'
import type { Parsed } from './parse.ts'

const REFERENCE = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g

/** Expands in place every string under `data.settings`; returns a problem per unset variable without a default. */
export function expandSettingsEnv(data: Record<string, unknown>, parsed: Parsed, env: NodeJS.ProcessEnv): Problem[] {
  const problems: Problem[] = []
  const walk = (value: unknown, path: Array<string | number>): unknown => {
    if (typeof value === 'string') {
      if (!value.includes('${')) return value
      return value.replace(REFERENCE, (whole, escaped: string, name: string, fallback: string | undefined) => {
        if (escaped) return whole.slice(1)
        const set = env[name]
        if (set !== undefined && set !== '') return set
        if (fallback !== undefined) return fallback
        problems.push({
          code: 'AGENT_INVALID',
          message: `${path.join('.')}: environment variable ${name} is not set (write \${${name}:-default} for a default)`,
          where: parsed.locate(path),
        })
        return whole
      })
    }
    if (Array.isArray(value)) return value.map((v, i) => walk(v, [...path, i]))
    if (typeof value === 'object' && value !== null) {
      const obj = value as Record<string, unknown>
      for (const k of Object.keys(obj)) obj[k] = walk(obj[k], [...path, k])
      return obj
    }
    return value
  }
  if (typeof data.settings === 'object' && data.settings !== null) walk(data.settings, ['settings'])
  return problems
}
