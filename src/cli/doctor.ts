/**
 * What `tea doctor` does (its definition is in commands/doctor.ts): runs every check (checks.ts) and prints one
 * line each, ✓ or ✗ with the fix, or all of them as JSON. Exit 0 when every check passes, 1 otherwise.
 */

import { resolve } from 'node:path'
import { requireAgent } from '../agent/load.ts'
import { resolveOllamaUrl } from '../llm/base-url.ts'
import { lazyRegistry } from '../catalog.ts'
import { dataDirOf } from './data-dir.ts'
import { EXIT } from './exit.ts'
import type { Io } from './io.ts'
import {
  agentCheck,
  askModelServer,
  cacheDirCheck,
  type CheckResult,
  clockCheck,
  dataDirCheck,
  glibcCheck,
  memoryCheck,
  modelServerCheck,
  modelsPulledCheck,
  ollamaModels,
} from './doctor/checks.ts'
import { ggufCheck, ggufModels } from './doctor/gguf.ts'
import { feature } from '../feature-list.ts'

export async function doctorCommand(
  { args, flags }: { args: { agents: string[] }; flags: { 'data-dir'?: string; json: boolean } },
  io: Io,
): Promise<number> {
  const registry = lazyRegistry()
  await registry.load() // the agents are loaded synchronously below, each inside its check
  const dataDir = dataDirOf(flags['data-dir'], io)
  const agents = args.agents.map((file) => agentCheck(file, () => requireAgent(resolve(io.cwd, file), registry)))
  const wanted = [...new Set(agents.flatMap((a) => (a.spec ? ollamaModels(a.spec, io.env) : [])))]
  const baseUrl = agents.map((a) => a.spec?.settings.llm.base_url).find((u) => typeof u === 'string')
  const gguf = ggufModels(
    agents.flatMap((a) => (a.spec ? [a.spec] : [])),
    io.env,
  )
  // Agents that name only GGUF models need no model server: asking for one would only fail.
  const serverless = gguf.length > 0 && wanted.length === 0
  const server = serverless ? undefined : await askModelServer(resolveOllamaUrl(baseUrl, io.env))
  const llama = gguf.length ? await feature('llama')?.load?.() : undefined
  const checks: CheckResult[] = [
    ...(server ? [modelServerCheck(server), modelsPulledCheck(server, wanted), memoryCheck(server, wanted)] : []),
    ...gguf.map((m) => ggufCheck(m, llama?.ggufReport)),
    dataDirCheck(dataDir),
    cacheDirCheck(io.env),
    glibcCheck(),
    clockCheck(dataDir),
    ...agents.map((a) => a.check),
  ]
  const ok = checks.every((c) => c.ok)
  if (flags.json) io.out(`${JSON.stringify({ ok, checks }, null, 2)}\n`)
  else
    io.out(
      checks.map((c) => `${c.ok ? '✓' : '✗'} ${c.name}: ${c.detail}${c.fix ? `\n    fix: ${c.fix}` : ''}`).join('\n') +
        `\n${ok ? 'all checks passed' : `${checks.filter((c) => !c.ok).length} of ${checks.length} checks failed`}\n`,
    )
  return ok ? EXIT.ok : EXIT.failed
}
