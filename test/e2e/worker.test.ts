/**
 * `tea worker` from the built bundle (SPEC §3.10): tasks created with `tea aof`, an agent of `run:` and
 * `file.write` nodes, real processes killed with SIGKILL and SIGINT. Side effects are appended to a log file so a
 * node that ran twice shows.
 */

import { existsSync, readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { collect, scratch, spawnTea, tea } from './cli.ts'

const SEEN_AGENT = `name: seer
initial_state:
  greeting: hello
  task: overwritten by the worker
nodes:
  - name: look
    run: "return { seen: { ...state.task, agent_id: state.agent_id, greeting: state.greeting }, summary: 'calibrated ' + state.task.title }"
  - name: keep
    uses: file.write
    with: { path: seen.json, content: "{{ state.seen | tojson }}" }
`

const DECIDER = `name: decider
nodes:
  - name: decide
    run: |
      const want = state.task.metadata.want
      if (want === 'fail') throw new Error('boom')
      return { outcome: want, summary: 'wanted ' + want, blockers: want === 'blocked' ? ['needs a key'] : [] }
`

const write = (name: string) => `
  - name: ${name}
    uses: file.write
    with: { path: log.txt, content: "${name}\\n", append: true }`
const SLOW = `name: slow
nodes:${write('w1')}
  - name: wait
    run: "await new Promise((r) => setTimeout(r, 1500)); return { waited: true }"${write('w2')}
`

type Scratch = ReturnType<typeof scratch>

async function aof(s: Scratch, args: string[], stdin?: string): Promise<string> {
  const r = await tea(['aof', ...args, '--data-dir', s.path('data')], stdin === undefined ? {} : { stdin })
  assert.is(r.code, 0, `tea aof ${args.join(' ')}: ${r.stderr}`)
  return r.stdout.trim()
}

const workerArgs = (s: Scratch, agent: string, ...more: string[]) => [
  'worker',
  '--agent-id',
  'swe',
  '--agent',
  s.path(agent),
  '--data-dir',
  s.path('data'),
  ...more,
]
const folderOf = (s: Scratch, id: string) =>
  ['ready', 'in-progress', 'review', 'done', 'blocked'].find((st) => existsSync(s.path(`data/tasks/${st}/${id}.md`)))
const json = (s: Scratch, rel: string) => JSON.parse(readFileSync(s.path(rel), 'utf8'))
const lines = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))

/** Starts a worker with per-node progress and resolves once `node` has finished (its checkpoint is committed). */
function workerUntil(s: Scratch, node: string, ...more: string[]) {
  const child = spawnTea([...workerArgs(s, 'slow.yaml', '-v'), ...more])
  const done = collect(child)
  let err = ''
  const seen = new Promise<void>((resolve) => {
    child.stderr!.on('data', (d) => {
      err += d
      if (err.includes(`✓ ${node} `)) resolve()
    })
  })
  // A worker that ends without reaching the node fails the test instead of leaving it waiting.
  const reached = Promise.race([
    seen,
    done.then((r) => Promise.reject(new Error(`the worker ended (${r.code}) before ${node}: ${r.stderr}`))),
  ])
  return { child, done, reached }
}

test('tea worker --once: leases the routed task, gives the agent the task and handoff inputs, reports done → review', async () => {
  const s = scratch({ 'agent.yaml': SEEN_AGENT })
  const parent = await aof(s, ['task', 'create', '--title', 'Parent', '--agent', 'lead', '--status', 'ready'])
  await aof(s, ['lease', parent, '--agent', 'lead'])
  const id = await aof(s, [
    'task',
    'create',
    '--title',
    'Calibrate sensor',
    '--body',
    'Use the reference probe.',
    '--agent',
    'swe',
    '--status',
    'ready',
    '--parent',
    parent,
  ])
  const envelope = {
    protocol: 'aof',
    version: 1,
    type: 'handoff.request',
    taskId: id,
    fromAgent: 'lead',
    toAgent: 'swe',
    sentAt: new Date().toISOString(),
    payload: {
      taskId: id,
      parentTaskId: parent,
      fromAgent: 'lead',
      toAgent: 'swe',
      dueBy: '2030-01-01T00:00:00.000Z',
      acceptanceCriteria: ['within 0.1 K'],
    },
  }
  assert.match(await aof(s, ['send', '-'], `AOF/1 ${JSON.stringify(envelope)}`), '"accepted"')
  const elsewhere = await aof(s, ['task', 'create', '--title', 'Not ours', '--agent', 'qa', '--status', 'ready'])

  const r = await tea(workerArgs(s, 'agent.yaml', '--once'))
  assert.is(r.code, 0, r.stderr)
  const aofRunId = json(s, `data/state/runs/${id}/run.json`).runId
  assert.equal(lines(r.stdout), [{ taskId: id, runId: `aof-${id}-${aofRunId}`, outcome: 'done', status: 'review' }])
  assert.is(folderOf(s, id), 'review')
  const result = json(s, `data/state/runs/${id}/run_result.json`)
  assert.equal([result.outcome, result.runId, result.agentId, result.notes], ['done', aofRunId, 'swe', 'calibrated Calibrate sensor'])
  const events = lines(await aof(s, ['events', '--task', id])).map((e) => e.type)
  for (const t of ['lease.acquired', 'protocol.message.received', 'task.completed']) assert.ok(events.includes(t), `${t} in ${events}`)

  const seen = JSON.parse(readFileSync(s.path('seen.json'), 'utf8'))
  assert.equal([seen.id, seen.title, seen.agent_id, seen.greeting], [id, 'Calibrate sensor', 'swe', 'hello'])
  assert.match(seen.body, 'Use the reference probe.')
  assert.equal(seen.inputs.acceptanceCriteria, ['within 0.1 K'])
  assert.is(seen.metadata.delegationDepth, 1)
  assert.is(folderOf(s, elsewhere), 'ready', 'a task routed to another agent is left alone')
  const runs = JSON.parse((await tea(['runs', '--json', '--data-dir', s.path('data')])).stdout)
  assert.equal(
    runs.map((x: { run_id: string; status: string }) => [x.run_id, x.status]),
    [[`aof-${id}-${aofRunId}`, 'completed']],
  )

  const idle = await tea(workerArgs(s, 'agent.yaml', '--once'))
  assert.equal([idle.code, idle.stdout], [0, ''])
  assert.match(idle.stderr, 'no ready task routed to swe')
  s.cleanup()
})

test('the final state outcome picks the report: done (no review) → done, needs_review → review, blocked and a failed run → blocked', async () => {
  const s = scratch({ 'agent.yaml': DECIDER })
  const ids: Record<string, string> = {}
  for (const want of ['done', 'needs_review', 'blocked', 'fail']) {
    ids[want] = await aof(s, [
      'task',
      'create',
      '--title',
      want,
      '--agent',
      'swe',
      '--status',
      'ready',
      '--meta',
      `want=${want}`,
      ...(want === 'done' ? ['--meta', 'reviewRequired=false'] : []),
    ])
  }
  const outcomes: Record<string, string> = {}
  for (let i = 0; i < 4; i++) {
    const r = await tea(workerArgs(s, 'agent.yaml', '--once'))
    assert.is(r.code, 0, r.stderr)
    const [line] = lines(r.stdout)
    outcomes[line.taskId] = `${line.outcome} → ${line.status}`
  }
  assert.equal(outcomes, {
    [ids.done!]: 'done → done',
    [ids.needs_review!]: 'needs_review → review',
    [ids.blocked!]: 'blocked → blocked',
    [ids.fail!]: 'blocked → blocked',
  })
  assert.equal(json(s, `data/state/runs/${ids.blocked}/run_result.json`).blockers, ['needs a key'])
  const failed = json(s, `data/state/runs/${ids.fail}/run_result.json`)
  assert.match(failed.blockers[0], "at node 'decide'")
  assert.match(failed.blockers[0], 'boom')
  s.cleanup()
})

test('a worker SIGKILLed mid-task: a restarted worker resumes the same run, never re-running a recorded node', async () => {
  const s = scratch({ 'slow.yaml': SLOW })
  const id = await aof(s, ['task', 'create', '--title', 'Slow', '--agent', 'swe', '--status', 'ready'])
  const first = workerUntil(s, 'w1', '--once')
  await first.reached
  first.child.kill('SIGKILL')
  const killed = await first.done
  assert.is(killed.signal, 'SIGKILL')
  const runId = /starting run (\S+)/.exec(killed.stderr)![1]!
  assert.is(readFileSync(s.path('log.txt'), 'utf8'), 'w1\n')
  assert.is(folderOf(s, id), 'in-progress')

  const again = await tea(workerArgs(s, 'slow.yaml', '--once'))
  assert.is(again.code, 0, again.stderr)
  assert.match(again.stderr, `resuming run ${runId}`)
  assert.equal(lines(again.stdout), [{ taskId: id, runId, outcome: 'done', status: 'review' }])
  assert.is(readFileSync(s.path('log.txt'), 'utf8'), 'w1\nw2\n', 'w1 ran once')
  s.cleanup()
})

test("AOF-BDD-78 (through a worker) stale heartbeat: a killed worker's task is reclaimed by tea aof poll, and the next lease starts a fresh run", async () => {
  const s = scratch({ 'slow.yaml': SLOW })
  const id = await aof(s, ['task', 'create', '--title', 'Slow', '--agent', 'swe', '--status', 'ready'])
  const first = workerUntil(s, 'w1', '--once')
  await first.reached
  first.child.kill('SIGKILL')
  const killedRun = /starting run (\S+)/.exec((await first.done).stderr)![1]!

  const polled = JSON.parse(await aof(s, ['poll', '--now', '2099-01-01T00:00:00.000Z']))
  assert.equal(
    polled.actions.map((a: { type: string; taskId: string; resolution: string }) => [a.type, a.taskId, a.resolution]),
    [['stale_heartbeat', id, 'reclaimed']],
  )
  assert.is(folderOf(s, id), 'ready')
  const expired = json(s, `data/state/runs/${id}/run.json`)
  assert.equal([expired.status, expired.metadata.expiredReason], ['failed', 'stale_heartbeat'])

  const next = await tea(workerArgs(s, 'slow.yaml', '--once'))
  assert.is(next.code, 0, next.stderr)
  const [line] = lines(next.stdout)
  assert.is.not(line.runId, killedRun, 'a new AOF run is a new agent run')
  assert.equal([line.outcome, line.status], ['done', 'review'])
  assert.is(readFileSync(s.path('log.txt'), 'utf8'), 'w1\nw1\nw2\n', 'the fresh run started from the beginning')
  s.cleanup()
})

test('SIGINT stops a polling worker after the current checkpoint with exit 130; the task stays in progress and resumes', async () => {
  const s = scratch({ 'slow.yaml': SLOW })
  const id = await aof(s, ['task', 'create', '--title', 'Slow', '--agent', 'swe', '--status', 'ready'])
  const w = workerUntil(s, 'w1', '--interval-ms', '100')
  await w.reached
  w.child.kill('SIGINT')
  const stopped = await w.done
  assert.is(stopped.code, 130, stopped.stderr)
  const [line] = lines(stopped.stdout)
  assert.equal([line.taskId, line.outcome, line.status], [id, 'stopped', 'in-progress'])
  assert.is(folderOf(s, id), 'in-progress')
  assert.is(json(s, `data/state/runs/${id}/run.json`).status, 'running')

  const resumed = await tea(workerArgs(s, 'slow.yaml', '--once'))
  assert.is(resumed.code, 0, resumed.stderr)
  assert.equal(lines(resumed.stdout), [{ taskId: id, runId: line.runId, outcome: 'done', status: 'review' }])
  assert.is(readFileSync(s.path('log.txt'), 'utf8'), 'w1\nw2\n')
  s.cleanup()
})

test('tea worker: missing --agent-id or --agent is a usage error (exit 2)', async () => {
  const s = scratch({ 'slow.yaml': SLOW })
  const noId = await tea(['worker', '--agent', s.path('slow.yaml'), '--data-dir', s.path('data'), '--once'])
  assert.equal([noId.code, /--agent-id is required/.test(noId.stderr)], [2, true])
  const noAgent = await tea(['worker', '--agent-id', 'swe', '--data-dir', s.path('data'), '--once'])
  assert.equal([noAgent.code, /--agent is required/.test(noAgent.stderr)], [2, true])
  s.cleanup()
})

test.run()
