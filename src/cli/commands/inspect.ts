/** `tea validate`, `tea graph` and `tea actions`: reading an agent or the build without running (../inspect.ts). */

import { defineCommand } from '../command.ts'

const AGENT = [{ name: 'agent', value: 'agent.yaml', description: 'the agent file' }] as const

export const validate = defineCommand({
  name: 'validate',
  summary: 'check an agent without running it; every problem as file:line:col: CODE message',
  description: `Checks the YAML, the structure, node names and targets, actions and their static parameters,
template syntax and run: syntax. Prints an OK line on stdout (exit 0), or every problem on stderr (exit 2).`,
  args: AGENT,
  run: async (input, io) => (await import('../inspect.ts')).validateCommand(input, io),
})

export const graph = defineCommand({
  name: 'graph',
  summary: "print the agent's control flow as Mermaid or DOT",
  description: 'Every node (with its action), goto rule (labelled with its condition), edge, parallel branch and on_error route.',
  args: AGENT,
  flags: { format: { type: 'enum', values: ['mermaid', 'dot'], default: 'mermaid', description: 'the output format' } },
  run: async (input, io) => (await import('../inspect.ts')).graphCommand(input, io),
})

export const actions = defineCommand({
  name: 'actions',
  summary: 'list the actions this build has',
  flags: {
    json: { type: 'boolean', description: 'print {name, description, params} for each, params being the JSON Schema of its parameters' },
  },
  run: async (input, io) => (await import('../inspect.ts')).actionsCommand(input, io),
})
