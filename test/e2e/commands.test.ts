import { readFileSync } from 'node:fs'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { _openRawDb } from '../../src/store/lmdb-store.ts'
import { scratch, tea } from './cli.ts'

const Cli = suite('tea commands (end to end)')

const PAUSE = `
name: review
config: { interrupt_after: [draft] }
nodes:
  - name: draft
    run: "return { draft: 'v1' }"
  - name: publish
    interrupt: before
    run: "return { published: state.approved === true }"
`

Cli('an interrupt exits 3 with a resume hint; resume -i merges edits and the run completes', async () => {
  const s = scratch({ 'a.yaml': PAUSE })
  const data = s.path('data')
  const first = await tea(['run', s.path('a.yaml'), '--data-dir', data, '--run-id', 'r1'])
  assert.is(first.code, 3, first.stderr)
  assert.match(first.stderr, /paused after node 'draft'/)
  assert.match(first.stderr, /tea resume r1/)
  assert.equal(JSON.parse(first.stdout), { draft: 'v1' })
  const second = await tea(['resume', 'r1', '--data-dir', data])
  assert.is(second.code, 3, 'publish pauses before running, even after a resume')
  assert.match(second.stderr, /paused before node 'publish'/)
  const third = await tea(['resume', 'r1', '--data-dir', data, '-i', '{"approved": true}', '-q'])
  assert.is(third.code, 0, third.stderr)
  assert.equal(JSON.parse(third.stdout), { draft: 'v1', approved: true, published: true })
  const again = await tea(['resume', 'r1', '--data-dir', data])
  assert.is(again.code, 2)
  assert.match(again.stderr, /already completed/)
  s.cleanup()
})

Cli('tea runs lists runs with status, node and step; --json gives records; prune removes finished ones', async () => {
  const s = scratch({ 'a.yaml': PAUSE, 'ok.yaml': 'name: ok\nnodes:\n  - name: a\n    run: "return { a: 1 }"\n' })
  const data = s.path('data')
  await tea(['run', s.path('ok.yaml'), '--data-dir', data, '--run-id', 'done-1', '-q'])
  await tea(['run', s.path('ok.yaml'), '--data-dir', data, '--run-id', 'done-2', '-q'])
  await tea(['run', s.path('a.yaml'), '--data-dir', data, '--run-id', 'paused', '-q'])
  const list = await tea(['runs', '--data-dir', data])
  assert.is(list.code, 0)
  assert.match(list.stdout, /^RUN\s+STATUS\s+AGENT\s+NODE\s+STEP\s+UPDATED/)
  assert.match(list.stdout, /paused\s+interrupted\s+review\s+draft\s+1/)
  const json = JSON.parse((await tea(['runs', '--data-dir', data, '--json'])).stdout)
  assert.equal(json.map((r: { run_id: string; status: string }) => `${r.run_id}:${r.status}`).sort(), [
    'done-1:completed',
    'done-2:completed',
    'paused:interrupted',
  ])
  const pruned = await tea(['runs', 'prune', '--data-dir', data, '--keep', '1'])
  assert.is(pruned.code, 0, pruned.stderr)
  const left = JSON.parse((await tea(['runs', '--data-dir', data, '--json'])).stdout).map((r: { run_id: string }) => r.run_id)
  assert.is(left.length, 1)
  const bad = await tea(['runs', 'prune', '--data-dir', data, '--older-than', 'soon'])
  assert.is(bad.code, 2)
  assert.match(bad.stderr, /--older-than/)
  s.cleanup()
})

Cli('resuming a run that does not exist is a clear error', async () => {
  const s = scratch()
  const r = await tea(['resume', 'nope', '--data-dir', s.path('data')])
  assert.is(r.code, 2)
  assert.match(r.stderr, /RUN_NOT_FOUND/)
  s.cleanup()
})

Cli('tea validate prints OK or every problem as file:line:col: CODE message, exit 2', async () => {
  const s = scratch({
    'good.yaml': 'name: g\nnodes:\n  - name: a\n    run: "return {}"\n',
    'bad.yaml': 'name: b\nnodes:\n  - name: a\n    uses: llm.cal\n  - name: a\n    run: "return {}"\n    goto: nowhere\n',
    'broken.yaml': 'name: [\n',
  })
  const ok = await tea(['validate', s.path('good.yaml')])
  assert.is(ok.code, 0)
  assert.match(ok.stdout, /^OK .*good\.yaml: agent 'g', 1 node/)
  const bad = await tea(['validate', s.path('bad.yaml')])
  assert.is(bad.code, 2)
  const lines = bad.stderr.trim().split('\n')
  assert.match(lines[0]!, /bad\.yaml:4:11: UNKNOWN_ACTION .*llm\.call/)
  assert.match(lines[1]!, /bad\.yaml:5:11: DUPLICATE_NODE/)
  assert.match(lines[2]!, /bad\.yaml:7:11: UNKNOWN_NODE/)
  const broken = await tea(['validate', s.path('broken.yaml')])
  assert.is(broken.code, 2)
  assert.match(broken.stderr, /broken\.yaml:\d+:\d+: YAML_SYNTAX/)
  s.cleanup()
})

Cli('10: a TEA feature tea lacks is a warning at validate and run; the run fails at the node that needs it', async () => {
  const s = scratch({
    'tea.yaml':
      'name: t\nsettings:\n  opik: { project: x }\nnodes:\n  - name: a\n    run: "return { a: 1 }"\n  - name: b\n    uses: reason.dspy.cot\n',
  })
  const ok = await tea(['validate', s.path('tea.yaml')])
  assert.is(ok.code, 0, ok.stderr)
  assert.match(ok.stdout, /^OK .*tea\.yaml: agent 't', 2 nodes, 0 edges \(2 warnings\)/)
  assert.match(ok.stderr, /warning: .*tea\.yaml:3:3: TEA_UNSUPPORTED 'settings\.opik' is a TEA feature/)
  assert.match(ok.stderr, /warning: .*tea\.yaml:8:11: TEA_UNSUPPORTED node 'b': action 'reason\.dspy\.cot' is a TEA feature/)
  const run = await tea(['run', s.path('tea.yaml'), '--data-dir', s.path('data')])
  assert.is(run.code, 1)
  assert.match(run.stderr, /tea: warning: .*'settings\.opik'/)
  assert.match(run.stderr, /\[TEA_UNSUPPORTED\] node 'b' \(reason\.dspy\.cot\): action 'reason\.dspy\.cot' is a TEA feature/)
  s.cleanup()
})

Cli('tea graph prints Mermaid by default and DOT on request, including goto rule labels', async () => {
  const mermaid = await tea(['graph', 'examples/triage/agent.yaml'])
  assert.is(mermaid.code, 0, mermaid.stderr)
  assert.match(mermaid.stdout, /^flowchart TD/)
  assert.match(mermaid.stdout, /classify -->\|"state\.tries < 3"\| classify/)
  const dot = await tea(['graph', 'examples/triage/agent.yaml', '--format', 'dot'])
  assert.match(dot.stdout, /^digraph "triage"/)
  assert.match(dot.stdout, /"classify" -> "escalate" \[label="else"\];/)
  const bad = await tea(['graph', 'examples/triage/agent.yaml', '--format', 'png'])
  assert.is(bad.code, 2)
})

Cli('tea actions --json lists every action with a JSON Schema of its params', async () => {
  const r = await tea(['actions', '--json'])
  assert.is(r.code, 0)
  const actions = JSON.parse(r.stdout) as Array<{ name: string; params: { type?: string; properties?: Record<string, unknown> } }>
  const names = actions.map((a) => a.name)
  for (const n of [
    'llm.call',
    'llm.stream',
    'json.parse',
    'json.transform',
    'memory.store',
    'memory.get',
    'memory.delete',
    'memory.list',
    'http.get',
    'http.post',
    'file.read',
    'file.write',
    'file.list',
    'tools.list',
  ]) {
    assert.ok(names.includes(n), `missing ${n}`)
  }
  const llm = actions.find((a) => a.name === 'llm.call')!
  assert.is(llm.params.type, 'object')
  assert.ok(llm.params.properties?.prompt, 'llm.call documents prompt')
})

Cli('tea version and --version show version, target and features', async () => {
  const r = await tea(['--version'])
  assert.is(r.code, 0)
  assert.match(r.stdout, /^tea \d+\.\d+\.\d+ \(linux-x64; features: planning, reasoning, prolog, lua, python, fleet, llama; node v/)
})

Cli('unknown commands and options are usage errors with exit 2', async () => {
  const a = await tea(['frobnicate'])
  assert.is(a.code, 2)
  assert.match(a.stderr, /unknown command 'frobnicate'/)
  const b = await tea(['run', 'x.yaml', '--colour'])
  assert.is(b.code, 2)
  assert.match(b.stderr, /unknown option --colour/)
  const help = await tea(['run', '--help'])
  assert.is(help.code, 0)
  assert.match(help.stdout, /Exit codes: 0 completed/)
})

Cli('memory.* values persist across runs in the data dir', async () => {
  const s = scratch({
    'put.yaml': 'name: put\nnodes:\n  - name: a\n    uses: memory.store\n    with: { key: greeting, value: { text: hi } }\n',
    'get.yaml': 'name: get\nnodes:\n  - name: a\n    uses: memory.get\n    with: { key: greeting }\n    output: got\n',
  })
  const put = await tea(['run', s.path('put.yaml'), '--data-dir', s.path('data'), '-q'])
  assert.is(put.code, 0, put.stderr)
  const get = await tea(['run', s.path('get.yaml'), '--data-dir', s.path('data'), '-q'])
  assert.is(get.code, 0, get.stderr)
  assert.equal(JSON.parse(get.stdout).got, { value: { text: 'hi' }, found: true })
  s.cleanup()
})

Cli('a corrupted checkpoint record is CHECKPOINT_CORRUPT naming the run, not a crash', async () => {
  const s = scratch({
    'a.yaml': 'name: x\nnodes:\n  - name: a\n    run: "return { a: 1 }"\n  - name: b\n    run: "throw new Error(\'stop here\')"\n',
  })
  const data = s.path('data')
  const first = await tea(['run', s.path('a.yaml'), '--data-dir', data, '--run-id', 'hurt', '-q'])
  assert.is(first.code, 1)
  const raw = _openRawDb(data, 'checkpoints')
  for (const key of raw.keys(['hurt', 0], ['hurt', Infinity])) await raw.put(key, Buffer.from([0xc1, 0xff, 0x00]))
  await raw.close()
  const r = await tea(['resume', 'hurt', '--data-dir', data])
  assert.is(r.code, 1)
  assert.match(r.stderr, /CHECKPOINT_CORRUPT/)
  assert.match(r.stderr, /run hurt/)
  assert.not.match(r.stderr, /internal error|    at /)
  const list = await tea(['runs', '--data-dir', data])
  assert.is(list.code, 0, 'the store keeps working for listing')
  s.cleanup()
})

Cli('a bad --model, --record with --replay, or a missing cassette is refused before any run is recorded', async () => {
  const s = scratch({ 'a.yaml': 'name: x\nnodes:\n  - name: a\n    run: "return { a: 1 }"\n' })
  const data = s.path('data')
  for (const args of [
    ['--model', 'gpt4'],
    ['--record', s.path('r.jsonl'), '--replay', s.path('r.jsonl')],
    ['--replay', s.path('missing.jsonl')],
  ]) {
    const r = await tea(['run', s.path('a.yaml'), '--data-dir', data, ...args])
    assert.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
  }
  const runs = await tea(['runs', '--data-dir', data, '--json'])
  assert.equal(runs.stdout.trim() === '' ? [] : JSON.parse(runs.stdout), [])
  s.cleanup()
})

Cli('--stream ends with the error event after the earlier nodes, and -o still writes the state with --stream', async () => {
  const s = scratch({
    'bad.yaml': 'name: x\nnodes:\n  - name: a\n    run: "return { a: 1 }"\n  - name: b\n    run: "throw new Error(\'no\')"\n',
    'ok.yaml': 'name: y\nnodes:\n  - name: a\n    run: "return { a: 1 }"\n',
  })
  const r = await tea(['run', s.path('bad.yaml'), '--data-dir', s.path('data'), '--stream'])
  assert.is(r.code, 1)
  const types = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).type)
  // node_end comes once a node's checkpoint has committed, which may be after the next node started.
  assert.equal(
    types.filter((t) => t !== 'node_start'),
    ['start', 'node_end', 'error'],
  )
  const o = await tea(['run', s.path('ok.yaml'), '--data-dir', s.path('data'), '--stream', '-o', s.path('out.json')])
  assert.is(o.code, 0)
  assert.equal(JSON.parse(readFileSync(s.path('out.json'), 'utf8')), { a: 1 })
  s.cleanup()
})

Cli.run()
