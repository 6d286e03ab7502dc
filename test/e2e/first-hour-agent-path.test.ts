/**
 * Issue 31 item 6: a wrong agent path is AGENT_NOT_FOUND (exit 2) with a hint that points somewhere useful — a
 * near name, the agent files in the folder given, the examples — never the bare errno (ENOENT, EISDIR) the loader
 * met before. The same for every command that takes an agent file, and for a resumed run whose file is gone.
 */

import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { agentPathError } from '../../src/cli/agent-path.ts'
import { ROOT, scratch, tea } from './cli.ts'

const AGENT = 'name: a\nnodes:\n  - name: n\n    run: "return { ok: true }"\n'

function folder(): ReturnType<typeof scratch> {
  const s = scratch({ 'pump.yaml': AGENT, 'valve.yaml': AGENT, 'notes.txt': 'not an agent' })
  mkdirSync(s.path('one'))
  writeFileSync(s.path('one/agent.yaml'), AGENT)
  mkdirSync(s.path('empty'))
  return s
}

const lines = (stderr: string): string[] => stderr.trim().split('\n')

test('issue 31 item 6: tea run of a missing file names the near agent files, without an errno', async () => {
  const s = folder()
  const r = await tea(['run', 'pmup.yaml'], { cwd: s.dir })
  assert.is(r.code, 2)
  assert.equal(lines(r.stderr), ['tea run: AGENT_NOT_FOUND: no agent file pmup.yaml', 'hint: did you mean pump.yaml?'])
  const far = await tea(['run', 'boiler.yaml'], { cwd: s.dir })
  assert.equal(lines(far.stderr), ['tea run: AGENT_NOT_FOUND: no agent file boiler.yaml', 'hint: agent files in .: pump.yaml, valve.yaml'])
  assert.not.match(r.stderr + far.stderr, /ENOENT|--help/)
  s.cleanup()
})

test('issue 31 item 6: a folder is AGENT_NOT_FOUND naming the agent file in it, or the ones a level down', async () => {
  const s = folder()
  const one = await tea(['run', 'one'], { cwd: s.dir })
  assert.is(one.code, 2)
  assert.equal(lines(one.stderr), [
    'tea run: AGENT_NOT_FOUND: one is a folder; an agent is one YAML file',
    'hint: did you mean one/agent.yaml?',
  ])
  const empty = await tea(['run', 'empty'], { cwd: s.dir })
  assert.equal(lines(empty.stderr), [
    'tea run: AGENT_NOT_FOUND: empty is a folder; an agent is one YAML file',
    'hint: there is no agent file (*.yaml, *.yml) in it',
  ])
  // In a clone of tea the examples folder is named, and its agent files listed.
  const examples = await tea(['run', 'examples'], { cwd: ROOT })
  assert.match(
    lines(examples.stderr)[1]!,
    /^hint: the agent files in it: examples\/approval\/agent\.yaml, examples\/extract-with-retry\/agent\.yaml, .*, …$/,
  )
  assert.not.match(one.stderr + empty.stderr + examples.stderr, /EISDIR/)
  s.cleanup()
})

test('issue 31 item 6: a missing folder on the way gets a near folder name; a file used as a folder is said to be one', async () => {
  const r = await tea(['run', 'examples/helo/agent.yaml'], { cwd: ROOT })
  assert.is(r.code, 2)
  assert.equal(lines(r.stderr), [
    'tea run: AGENT_NOT_FOUND: no agent file examples/helo/agent.yaml: there is no folder examples/helo',
    'hint: did you mean examples/hello/agent.yaml?',
  ])
  const through = await tea(['run', 'examples/hello/agent.yaml/x.yaml'], { cwd: ROOT })
  assert.match(
    through.stderr,
    'tea run: AGENT_NOT_FOUND: no agent file examples/hello/agent.yaml/x.yaml: examples/hello/agent.yaml is a file, not a folder',
  )
  assert.not.match(through.stderr, 'ENOTDIR')
})

test('issue 31 item 6: validate, graph and worker say the same about a wrong path', async () => {
  const s = folder()
  for (const [args, label] of [
    [['validate', 'pmup.yaml'], 'tea validate'],
    [['graph', 'pmup.yaml'], 'tea graph'],
    [['worker', '--agent-id', 'w', '--agent', 'pmup.yaml', '--once', '--data-dir', s.path('data')], 'tea worker'],
  ] as const) {
    const r = await tea([...args], { cwd: s.dir })
    assert.is(r.code, 2, `${label}: ${r.stderr}`)
    assert.equal(lines(r.stderr), [`${label}: AGENT_NOT_FOUND: no agent file pmup.yaml`, 'hint: did you mean pump.yaml?'])
  }
  s.cleanup()
})

test('issue 31 item 6: resuming a run whose agent file was deleted names the file, coded', async () => {
  const s = scratch({
    'gate.yaml':
      'name: gate\nnodes:\n  - name: a\n    run: "return { a: 1 }"\n  - name: b\n    interrupt: before\n    run: "return { b: 1 }"\n',
  })
  const started = await tea(['run', 'gate.yaml', '--run-id', 'g1', '--data-dir', s.path('data'), '-q'], { cwd: s.dir })
  assert.is(started.code, 3, started.stderr)
  rmSync(s.path('gate.yaml'))
  const r = await tea(['resume', 'g1', '--data-dir', s.path('data')], { cwd: s.dir })
  assert.is(r.code, 2)
  assert.match(r.stderr, `tea resume: AGENT_NOT_FOUND: no agent file ${s.path('gate.yaml')}\n`)
  s.cleanup()
})

test('issue 31 item 6: a file tea may not read is AGENT_NOT_FOUND saying so, with how to look (EACCES cannot be made as root)', () => {
  const e = agentPathError('secret.yaml', '/srv/agents/secret.yaml', '/srv/agents', 'EACCES')
  assert.equal(
    [e.code, e.message, e.hint],
    [
      'AGENT_NOT_FOUND',
      'cannot read agent file secret.yaml: permission denied',
      "'ls -l secret.yaml' shows its owner and mode; tea reads it as the user it runs as",
    ],
  )
})

test.run()
