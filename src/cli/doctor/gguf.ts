/**
 * `tea doctor`'s check of each GGUF model an agent names (settings.llm.model or a node's `gguf:<path>`, TEA's
 * `provider: local` / `backend: local` with `model_path` or TEA_MODEL_PATH): the file exists and is a whole GGUF,
 * its architecture is one this build's llama.cpp runs, and the memory it needs fits in what is free. It reads the
 * file's header only (src/llm/gguf/report.ts, reached through the llama feature's entry: a build without llama.cpp
 * carries none of it and says so), as the provider does before loading: llama.cpp itself is not loaded.
 */

import { basename } from 'node:path'
import type { AgentSpec } from '../../agent/types.ts'
import { errorMessage, isTeaError } from '../../core/errors.ts'
import type { ggufReport } from '../../llm/gguf/report.ts'
import { ggufPath } from '../../llm/gguf/path.ts'
import { resolveModel } from '../../llm/model-spec.ts'
import type { CheckResult } from './checks.ts'

/** A GGUF model an agent names, with the context and slots it would be run with; or why it names none. */
export interface NamedGguf {
  path: string
  contextSize?: number
  slots: number
  /** TEA's provider local with no file named (GGUF_NOT_FOUND). */
  error?: unknown
}

/** The GGUF models the agents name: their settings' model and every node's literal `model:` (templates skipped). */
export function ggufModels(specs: AgentSpec[], env: NodeJS.ProcessEnv): NamedGguf[] {
  const found = new Map<string, NamedGguf>()
  for (const spec of specs) {
    const { llm } = spec.settings
    const slots = typeof llm.scheduler === 'object' ? (llm.scheduler.slots ?? 1) : 1
    const named: Array<[unknown, unknown]> = [
      [llm.model, llm.provider],
      ...spec.nodes
        .filter((n) => n.with?.model !== undefined)
        .map((n): [unknown, unknown] => [n.with?.model, n.with?.provider ?? llm.provider]),
    ]
    for (const [model, provider] of named) {
      if ([model, provider].some((v) => typeof v === 'string' && v.includes('{{'))) continue
      if ((model === undefined || model === '') && provider !== 'local') continue
      try {
        const m = resolveModel(model as string | undefined, provider as string | undefined, env, llm.shell_provider, llm.model_path)
        if (m.provider !== 'gguf') continue
        const path = ggufPath(m.model, llm.model_dir)
        found.set(path, { path, slots, ...(llm.n_ctx !== undefined && { contextSize: llm.n_ctx }) })
      } catch (e) {
        // provider local naming no file; any other bad model string is the agent check's to report.
        if (isTeaError(e, 'GGUF_NOT_FOUND')) found.set(`${spec.file}: local`, { path: spec.file, slots, error: e })
      }
    }
  }
  return [...found.values()]
}

/**
 * One GGUF model: a whole GGUF file of an architecture llama.cpp runs, needing no more memory than is free.
 * `report` is the llama feature's (undefined in a build without it).
 */
export function ggufCheck(model: NamedGguf, report: typeof ggufReport | undefined): CheckResult {
  const name = `gguf ${basename(model.path)}`
  if (model.error)
    return {
      name,
      ok: false,
      detail: `${model.path}: ${errorMessage(model.error)}`,
      ...(isTeaError(model.error) && model.error.hint ? { fix: model.error.hint } : {}),
    }
  if (!report)
    return {
      name,
      ok: false,
      detail: `${model.path}: this build cannot run GGUF models (it lacks the llama feature)`,
      fix: 'use a tea executable whose tea --version lists llama, or serve the model with Ollama (ollama:<name>)',
    }
  return { name, ...report(model.path, model.contextSize, model.slots) }
}
