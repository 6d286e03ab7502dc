import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parseArgv } from '../../src/cli/argv.ts'
import { type Command, defineCommand } from '../../src/cli/command.ts'
import { tea } from '../../src/cli/commands/index.ts'
import { renderHelp } from '../../src/cli/help.ts'
import { errorMessage } from '../../src/core/errors.ts'

const lease = defineCommand({
  name: 'lease',
  summary: "take a task's lease",
  description: 'Prints the lease as JSON.',
  args: [{ name: 'id', value: 'TASK-ID', description: 'the task' }],
  flags: {
    agent: { type: 'string', value: 'A', required: true, description: 'the agent id' },
    'ttl-ms': { type: 'ms', default: 600_000, description: 'lease length' },
    keep: { type: 'int', min: 1, max: 9, description: 'how many' },
    format: { type: 'enum', values: ['json', 'text'], default: 'json', description: 'output format' },
    meta: { type: 'list', value: 'key=value', description: 'an entry' },
    'data-dir': { type: 'string', value: 'DIR', defaultText: '$TEA_DATA_DIR, else ./.tea', description: 'where' },
    quiet: { type: 'boolean', short: 'q', description: 'no progress' },
  },
  notes: 'Exit codes: 0 ok.',
  run: async () => 0,
}) as Command
const group = defineCommand({ name: 'aof', summary: 'the AOF protocol', subcommands: [lease] }) as Command
const root = defineCommand({ name: 'tea', summary: 'the CLI', subcommands: [group] }) as Command

test('help is generated: usage with arguments and required flags, summary, description, arguments, options, notes', () => {
  assert.fixture(
    renderHelp([root, group, lease]),
    `Usage: tea aof lease <TASK-ID> --agent A [options]

Take a task's lease.

Prints the lease as JSON.

Arguments:
  <TASK-ID>  the task

Options:
      --agent A           the agent id (required)
      --ttl-ms N          lease length (default: 600000 = 10m; 1 to 2592000000 = 30d)
      --keep N            how many (1 to 9)
      --format json|text  output format (default: json)
      --meta key=value    an entry (repeatable)
      --data-dir DIR      where (default: $TEA_DATA_DIR, else ./.tea)
  -q, --quiet             no progress
  -h, --help              show this help

Exit codes: 0 ok.
`,
  )
})

test('a group lists its commands with their summaries and how to get their help', () => {
  assert.fixture(
    renderHelp([root, group]),
    `Usage: tea aof <command> [options]

The AOF protocol.

Commands:
  lease  take a task's lease

Options:
  -h, --help  show this help

Run 'tea aof <command> --help' for a command's options.
`,
  )
})

test('a long description wraps under its column, and a long flag puts it on the next line', () => {
  const cmd = defineCommand({
    name: 'x',
    summary: 's',
    flags: {
      input: { type: 'string', value: 'JSON|@file.json|@file.yaml|@another-long-one', description: 'word '.repeat(40).trim() },
      q: { type: 'boolean', description: 'short' },
    },
    run: async () => 0,
  }) as Command
  const lines = renderHelp([cmd]).split('\n')
  const at = lines.indexOf('      --input JSON|@file.json|@file.yaml|@another-long-one')
  assert.ok(at > 0, 'the long flag stands on its own line')
  assert.match(lines[at + 1]!, /^ {10,}word word/)
  assert.ok(
    lines.every((l) => l.length <= 110),
    'no line is wider than 110 columns',
  )
})

/** Every command of the tree with its path from the root. */
function walk(path: Command[]): Command[][] {
  const command = path[path.length - 1]!
  return [path, ...(command.subcommands ?? []).flatMap((c) => walk([...path, c]))]
}

/** The flags an Options table names: the `--name` at the head of each of its lines. */
function helpFlags(help: string): string[] {
  const options = help.split('\nOptions:\n')[1]!.split('\n\n')[0]!
  return [...options.matchAll(/^ {2}(?:-\w, |    )--([\w-]+)/gm)].map((m) => m[1]!)
}

test('every command of tea has help naming every flag it takes and no other, and each flag it names is accepted', () => {
  const paths = walk([tea])
  assert.ok(paths.length >= 25, `the tree has every command (${paths.length})`)
  for (const path of paths) {
    const command = path[path.length - 1]!
    const label = path.map((c) => c.name).join(' ')
    const help = renderHelp(path)
    assert.ok(help.startsWith(`Usage: ${label}`), label)
    assert.equal(helpFlags(help).sort(), [...Object.keys(command.flags ?? {}), 'help'].sort(), label)
    for (const sub of command.subcommands ?? [])
      assert.match(
        help,
        new RegExp(`^  ${sub.name} +${sub.summary.slice(0, 10).replace(/[()[\]{}.*+?^$|\\]/g, '\\$&')}`, 'm'),
        `${label} lists ${sub.name}`,
      )
    for (const [name, def] of Object.entries(command.flags ?? {})) {
      const value =
        def.type === 'boolean'
          ? []
          : [def.type === 'enum' ? def.values[0]! : def.type === 'duration' ? '1h' : def.type === 'int' || def.type === 'ms' ? '100' : 'x']
      try {
        parseArgv(command, [`--${name}`, ...value])
      } catch (e) {
        assert.not.match(errorMessage(e), `unknown option --${name}`, `${label} --${name}`)
        assert.not.match(errorMessage(e), `--${name} expects`, `${label} --${name}`)
      }
    }
  }
})

test('the commands of tea, as listed by tea --help', () => {
  assert.equal(
    (tea.subcommands ?? []).map((c) => c.name),
    ['run', 'resume', 'runs', 'validate', 'graph', 'actions', 'version', 'help', 'aof', 'worker', 'serve', 'mcp', 'doctor'],
  )
  assert.match(renderHelp([tea]), /^Usage: tea <command> \[options\]\n/)
})

test.run()
