/** `tea validate`, `tea graph` and `tea actions`: commands that read an agent or the build without running. */

import { TeaError } from '../core/errors.ts'
import { buildRegistry } from '../features.ts'
import { jsonSchemaOf } from '../actions/json-schema.ts'
import { loadAgentFile, requireAgent } from '../agent/load.ts'
import { formatProblem } from '../agent/problems.ts'
import { renderGraph } from '../agent/graph.ts'
import { parseArgs } from './args.ts'
import { EXIT } from './exit.ts'
import type { Command } from './io.ts'
import { leanLoad } from './lean.ts'

export const validateCommand: Command = async (argv, io) => {
  const { flags, positionals } = parseArgs(argv, { help: { type: 'boolean', short: 'h' } }, 'validate')
  if (flags.help) {
    io.out('Usage: tea validate <agent.yaml>\n\nChecks an agent without running it. Prints an OK line (exit 0), or every problem as\nfile:line:col: CODE message (exit 2).\n')
    return EXIT.ok
  }
  if (positionals.length !== 1) throw new TeaError('USAGE', 'validate: expected one agent file')
  const file = positionals[0]!
  const { spec, problems } = leanLoad(() => loadAgentFile(file, buildRegistry()))
  if (!spec || problems.length) {
    for (const p of problems) io.err(`${formatProblem(file, p)}\n`)
    io.err(`${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n`)
    return EXIT.usage
  }
  const edges = spec.edges.size + spec.parallel.size
  io.out(`OK ${file}: agent '${spec.name}', ${spec.nodes.length} node${spec.nodes.length === 1 ? '' : 's'}, ${edges} edge${edges === 1 ? '' : 's'}\n`)
  return EXIT.ok
}

export const graphCommand: Command = async (argv, io) => {
  const { flags, positionals } = parseArgs(argv, { format: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, 'graph')
  if (flags.help) {
    io.out('Usage: tea graph <agent.yaml> [--format mermaid|dot]\n\nPrints the agent\'s graph (nodes, goto rules, edges, parallel fan-outs) as Mermaid (default) or DOT.\n')
    return EXIT.ok
  }
  const format = flags.format ?? 'mermaid'
  if (format !== 'mermaid' && format !== 'dot') throw new TeaError('USAGE', `graph: --format must be mermaid or dot, got '${format}'`)
  if (positionals.length !== 1) throw new TeaError('USAGE', 'graph: expected one agent file')
  io.out(renderGraph(leanLoad(() => requireAgent(positionals[0]!, buildRegistry())), format))
  return EXIT.ok
}

export const actionsCommand: Command = async (argv, io) => {
  const { flags } = parseArgs(argv, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, 'actions')
  if (flags.help) {
    io.out('Usage: tea actions [--json]\n\nLists the actions this build has; --json adds the JSON Schema of each action\'s parameters.\n')
    return EXIT.ok
  }
  const actions = buildRegistry().list()
  if (flags.json) {
    const out = actions.map((a) => ({ name: a.name, description: a.description, params: jsonSchemaOf(a.params) }))
    io.out(`${JSON.stringify(out, null, 2)}\n`)
  } else {
    const width = Math.max(...actions.map((a) => a.name.length))
    for (const a of actions) io.out(`${a.name.padEnd(width)}  ${a.description}\n`)
  }
  return EXIT.ok
}
