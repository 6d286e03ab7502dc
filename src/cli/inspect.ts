/** What `tea validate`, `tea graph` and `tea actions` do (definitions, flags and help: commands/inspect.ts). */

import { lazyRegistry } from '../catalog.ts'
import { jsonSchemaOf } from '../actions/json-schema.ts'
import { loadAgentFileLoading, requireAgentLoading } from '../agent/load.ts'
import { formatProblem } from '../agent/problems.ts'
import { renderGraph } from '../agent/graph.ts'
import { describeLanguage } from '../agent/run-language.ts'
import { verifyAgent } from '../agent/verify.ts'
import { requireAgentPath } from './agent-path.ts'
import { EXIT } from './exit.ts'
import type { Io } from './io.ts'
import { cliLoading } from './lean.ts'

export async function validateCommand({ args }: { args: { agent: string } }, io: Io): Promise<number> {
  const file = args.agent
  // The actions the file names are loaded (src/catalog.ts), as for `tea run`: it checks them the same way.
  const registry = lazyRegistry()
  requireAgentPath(file, io.cwd)
  const { spec, problems, warnings } = await loadAgentFileLoading(file, registry, cliLoading(file))
  // TEA features tea does not provide: the file is valid, and a run fails at the node that needs one.
  for (const w of warnings) io.err(`warning: ${formatProblem(file, w)}\n`)
  if (!spec || problems.length) {
    for (const p of problems) io.err(`${formatProblem(file, p)}\n`)
    io.err(`${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n`)
    return EXIT.usage
  }
  const findings = await verifyAgent(spec, registry)
  if (findings.length) {
    for (const f of findings) io.err(`${file}: node '${f.node}' (${f.action}): ${f.message}\n`)
    io.err(`${file}: ${findings.length} problem${findings.length === 1 ? '' : 's'}\n`)
    return EXIT.usage
  }
  const edges = spec.edges.size + spec.parallel.size
  const warned = warnings.length ? ` (${warnings.length} warning${warnings.length === 1 ? '' : 's'})` : ''
  io.out(
    `OK ${file}: agent '${spec.name}', ${spec.nodes.length} node${spec.nodes.length === 1 ? '' : 's'}, ${edges} edge${edges === 1 ? '' : 's'}${warned}\n`,
  )
  // Which language each run: body runs in, and why: TEA's files name none (agent/run-language.ts).
  for (const c of spec.runLanguages ?? []) io.out(`  run: ${c.key}: ${describeLanguage(c)}\n`)
  return EXIT.ok
}

export async function graphCommand(input: { args: { agent: string }; flags: { format: 'mermaid' | 'dot' } }, io: Io): Promise<number> {
  const file = input.args.agent
  requireAgentPath(file, io.cwd)
  io.out(renderGraph(await requireAgentLoading(file, lazyRegistry(), undefined, cliLoading(file)), input.flags.format))
  return EXIT.ok
}

export async function actionsCommand({ flags }: { flags: { json: boolean } }, io: Io): Promise<number> {
  const registry = lazyRegistry()
  await registry.load() // every action of this build
  const actions = registry.list()
  if (flags.json) {
    const out = actions.map((a) => ({ name: a.name, description: a.description, params: jsonSchemaOf(a.params) }))
    io.out(`${JSON.stringify(out, null, 2)}\n`)
  } else {
    const width = Math.max(...actions.map((a) => a.name.length))
    for (const a of actions) io.out(`${a.name.padEnd(width)}  ${a.description}\n`)
  }
  return EXIT.ok
}
