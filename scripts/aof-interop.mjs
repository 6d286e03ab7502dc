// tea ↔ reference AOF on one shared tree (issue 15): both implementations act on the same tasks, in both orders,
// and the script counts what crosses over. It needs a built reference (Seldon-Engine/aof, v1.20.0 tested):
//
//   git clone https://github.com/Seldon-Engine/aof && cd aof && npm ci --ignore-scripts && npx tsc \
//     && node scripts/copy-extension-entry.js && node scripts/stamp-version.mjs
//   AOF_REFERENCE_DIR=/path/to/aof node scripts/aof-interop.mjs [--tasks 200] [--keep]
//
// Without a reference it prints why it skipped and exits 0 (CI has no copy). tea is loaded from src/ through tsx,
// the reference from its dist/ (store, protocol router, run artifacts, event logger: none of them loads its native
// modules). Everything happens in a scratch folder with HOME and AOF_DATA_DIR pointed into it; exit 1 when a check
// fails. The flows, one per task in turn, half the tasks created by tea and half by the reference:
//
//   A  reference leases → tea heartbeats → tea reports done: the reference reads tea's result, its run completes
//   B  tea leases → the reference reports done: tea's run record completes
//   C  reference leases, its heartbeat expires → tea's poll reclaims: the reference's run.json becomes failed
//   D  tea leases → reference reports blocked → tea moves to ready and leases again → the reference's session end
//      (its stale-result path) → tea reports done: the new run is never sent to the old result
//   E  reference leases → tea reports blocked → the reference moves to ready and leases again (its lease keeps the
//      old result) → tea's session end → the reference's session end → the reference reports done. Every other E
//      task skips tea's session end: that path is the reference's own stale-result bug and is counted apart.
//
// Then the whole tree: no run.json left `running` outside in-progress, both sides list the same statuses, the
// reference parses every task file and lints it as tea does, and every task-file mutation the reference refuses is
// reported by `tea aof lint`.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

const { values: opts } = parseArgs({
  options: { reference: { type: 'string' }, tasks: { type: 'string', default: '200' }, keep: { type: 'boolean', default: false } },
})
const refDir = opts.reference ?? process.env.AOF_REFERENCE_DIR
if (!refDir) {
  console.log(
    'aof-interop: skipped: no reference AOF given (set AOF_REFERENCE_DIR or pass --reference DIR, a built Seldon-Engine/aof checkout)',
  )
  process.exit(0)
}
const refDist = resolve(refDir, 'dist')
try {
  readFileSync(join(refDist, 'store', 'index.js'))
} catch {
  console.error(`aof-interop: ${refDist}/store/index.js not found: build the reference first (npm ci --ignore-scripts && npx tsc)`)
  process.exit(2)
}
// The reference warns about every AOF_* variable it does not know.
delete process.env.AOF_REFERENCE_DIR
const N = Number(opts.tasks)
const root = mkdtempSync(join(tmpdir(), 'tea-aof-interop-'))
process.env.HOME = join(root, 'home')
process.env.AOF_DATA_DIR = join(root, 'aof-data')
mkdirSync(process.env.HOME, { recursive: true })

const { register } = await import('tsx/esm/api')
register()
const here = dirname(fileURLToPath(import.meta.url))
const tea = await import(pathToFileURL(join(here, '..', 'src', 'aof', 'index.ts')).href)
const ref = (p) => import(pathToFileURL(join(refDist, p)).href)
const { FilesystemTaskStore, acquireLease: refLease, parseTaskFile } = await ref('store/index.js')
const { ProtocolRouter } = await ref('protocol/router.js')
const { parseProtocolMessage: refParse } = await ref('protocol/parsers.js')
const refRuns = await ref('recovery/run-artifacts.js')
const { EventLogger } = await ref('events/logger.js')

const ctx = tea.aofContext(root)
tea.initDataDir(ctx)
const store = new FilesystemTaskStore(root)
await store.init()
const logger = new EventLogger(join(root, 'events'))
const router = new ProtocolRouter({ store, logger })

const counts = {}
const failures = []
function check(name, ok, detail) {
  const c = (counts[name] ??= { ok: 0, failed: 0 })
  if (ok) c.ok++
  else {
    c.failed++
    if (failures.length < 40) failures.push(`${name}: ${detail ?? ''}`)
  }
}
const count = (name) => void (counts[name] ??= { ok: 0, failed: 0 }).ok++

const agent = 'swe-interop'
const envelope = (type, taskId, payload) => ({
  protocol: 'aof',
  version: 1,
  projectId: 'demo',
  type,
  taskId,
  fromAgent: agent,
  toAgent: 'orchestrator',
  sentAt: new Date().toISOString(),
  payload,
})
const completion = (taskId, outcome) =>
  envelope('completion.report', taskId, {
    outcome,
    summaryRef: 'outputs/summary.md',
    deliverables: [],
    tests: { total: 1, passed: outcome === 'done' ? 1 : 0, failed: outcome === 'done' ? 0 : 1 },
    blockers: outcome === 'blocked' ? ['waiting'] : [],
    notes: `${outcome} from interop`,
  })
const teaSend = (msg) => tea.routeMessage(ctx, msg)
async function refSend(msg) {
  const env = refParse(`AOF/1 ${JSON.stringify(msg)}`, logger)
  if (!env) throw new Error(`the reference refused ${msg.type} for ${msg.taskId}`)
  await router.route(env)
}
const refStatus = async (id) => (await store.get(id))?.frontmatter.status
const teaStatus = async (id) => (await tea.getTask(ctx, id))?.status
const later = (ms) => tea.aofContext(root, { now: () => new Date(Date.now() + ms) })
const tick = () => new Promise((r) => setTimeout(r, 2)) // distinct timestamps between two writers' steps

async function create(i) {
  const title = `interop ${i}`
  if (Math.floor(i / 5) % 2 === 0)
    return (await tea.createTask(ctx, { title, status: 'ready', agent, body: i % 7 === 0 ? 'line 1\r\nline 2' : `task ${i}` })).id
  const t = await store.create({ title, createdBy: 'interop', routing: { agent }, initialStatus: 'ready', body: `task ${i}` })
  return t.frontmatter.id
}

const flows = {
  async A(id) {
    await refLease(store, id, agent)
    await tick()
    let beat = true
    try {
      await tea.heartbeat(ctx, id, agent)
    } catch (e) {
      beat = false
      check('A tea heartbeat keeps a reference-leased run alive', false, `${id}: ${e.message}`)
    }
    if (beat) check('A tea heartbeat keeps a reference-leased run alive', true)
    const out = await teaSend(completion(id, 'done'))
    check('A tea report on a reference-leased task accepted', out.outcome === 'accepted', `${id}: ${JSON.stringify(out)}`)
    const result = await refRuns.readRunResult(store, id)
    check("A the reference's readRunResult sees tea's result", result?.outcome === 'done', id)
    const run = await refRuns.readRunArtifact(store, id)
    check("A the reference's run.json completed", run?.status === 'completed', `${id}: ${run?.status}`)
    return 'review'
  },
  async B(id) {
    await tea.acquireLease(ctx, id, agent)
    await tick()
    await refSend(completion(id, 'done'))
    const run = tea.readRun(ctx, id)
    check("B a reference report completes tea's run record", run?.status === 'completed', `${id}: ${run?.status}`)
    check('B tea reads the run id after the reference rewrote run.json', typeof run?.runId === 'string', id)
    return 'review'
  },
  async C(id) {
    await refLease(store, id, agent, { ttlMs: 1000, heartbeatTtlMs: 1000 })
    const r = await tea.poll(later(3_600_000))
    const mine = r.actions.find((a) => a.taskId === id)
    check('C tea poll reclaims a reference run whose heartbeat expired', mine?.resolution === 'reclaimed', `${id}: ${JSON.stringify(mine)}`)
    const run = await refRuns.readRunArtifact(store, id)
    check("C the reference's run.json marked failed", run?.status === 'failed', `${id}: ${run?.status}`)
    return 'ready'
  },
  async D(id) {
    await tea.acquireLease(ctx, id, agent)
    await tick()
    await refSend(completion(id, 'blocked'))
    await tea.transitionTask(ctx, id, 'ready', { actor: 'ops' })
    await tick()
    await tea.acquireLease(ctx, id, agent)
    await router.handleSessionEnd()
    check(
      "D the reference's session end leaves tea's new run alone",
      (await refStatus(id)) === 'in-progress',
      `${id}: ${await refStatus(id)}`,
    )
    await tick()
    const out = await teaSend(completion(id, 'done'))
    check('D the new run reports done', out.outcome === 'accepted', `${id}: ${JSON.stringify(out)}`)
    return 'review'
  },
  async E(id, i) {
    await refLease(store, id, agent)
    await tick()
    await teaSend(completion(id, 'blocked'))
    await store.transition(id, 'ready', { reason: 'retry' })
    await tick()
    await refLease(store, id, agent)
    const teaPass = Math.floor(i / 5) % 4 < 2
    if (teaPass) await tea.handleSessionEnd(ctx)
    await router.handleSessionEnd()
    const status = await refStatus(id)
    if (teaPass)
      check(
        "E with tea's session end first, the reference's session end leaves its new run alone",
        status === 'in-progress',
        `${id}: ${status}`,
      )
    else {
      count(`E without tea's session end: the reference applies the old result to its own new run (${status}) — its bug`)
      return status
    }
    await tick()
    await refSend(completion(id, 'done'))
    return 'review'
  },
}

const t0 = performance.now()
const expected = new Map()
const names = Object.keys(flows)
for (let i = 0; i < N; i++) {
  const id = await create(i)
  const flow = names[i % names.length]
  try {
    expected.set(id, await flows[flow](id, i))
  } catch (e) {
    check(`${flow} flow ran`, false, `${id}: ${e.message}`)
  }
}

// The whole tree.
const teaList = tea.listTasks(ctx).tasks
const refList = await store.list()
check('both sides list every task', teaList.length === N && refList.length === N, `tea ${teaList.length}, reference ${refList.length}`)
const refById = new Map(refList.map((t) => [t.frontmatter.id, t.frontmatter.status]))
for (const t of teaList) {
  check('status: tea and the reference agree', refById.get(t.id) === t.status, `${t.id}: tea ${t.status}, reference ${refById.get(t.id)}`)
  if (expected.has(t.id))
    check('status: where the flow should end', expected.get(t.id) === t.status, `${t.id}: ${t.status}, expected ${expected.get(t.id)}`)
}
// Both layouts, so an older tea (runs/) is measured too.
const runFiles = ['state/runs', 'runs'].flatMap((dir) => {
  let ids = []
  try {
    ids = readdirSync(join(root, dir))
  } catch {}
  return ids.map((id) => [id, join(root, dir, id, 'run.json')])
})
for (const [id, path] of runFiles) {
  let run
  try {
    run = JSON.parse(readFileSync(path, 'utf8'))
  } catch {
    continue
  }
  const status = await teaStatus(id)
  check(
    'no run.json left running outside in-progress',
    run.status !== 'running' || status === 'in-progress',
    `${id}: run ${run.status}, task ${status}`,
  )
}
for (const t of teaList) {
  let ok = true
  try {
    parseTaskFile(readFileSync(t.path, 'utf8'))
  } catch {
    ok = false
  }
  check("the reference parses tea's view of every task file", ok, t.id)
}
const refLint = await store.lint()
const teaLint = tea.lintDataDir(ctx)
// The reference keeps a lease on review/blocked and both lints flag it; apart from that both must find nothing.
const refFlagged = refLint.map((x) => x.task.frontmatter.id).sort()
const teaFlagged = teaLint
  .filter((p) => p.code === 'lease_not_in_progress')
  .map((p) => p.where.file.split('/').pop().slice(0, -3))
  .sort()
check(
  'lint: tea and the reference flag the same tasks',
  JSON.stringify(refFlagged) === JSON.stringify(teaFlagged),
  `reference ${refFlagged}, tea ${teaFlagged}`,
)
check(
  'lint: tea finds nothing else',
  teaLint.every((p) => p.code === 'lease_not_in_progress'),
  teaLint.map((p) => `${p.code} ${p.where.file}`).join('; '),
)
count(`lint: leases the reference kept on review/blocked, flagged by both (${refFlagged.length})`)

// Task files the reference refuses: tea's lint must say so; and a file the reference accepts, tea must lint clean.
// Each case patches the frontmatter of a clean task (a key set to undefined is removed).
const D = '2026-02-10T10:00:00.000Z',
  O = '2026-02-10T10:00:00+01:00'
const hop = { id: 'a', role: 'r' }
const wf = (extra = {}) => ({
  definition: { name: 'w', hops: [{ ...hop, ...(extra.hop ?? {}) }] },
  state: { status: 'running', hops: extra.hops ?? {}, ...(extra.state ?? {}) },
})
const cond = (c) => ({ workflow: wf({ hop: { condition: c } }) })
const CASES = [
  ['createdAt offset', { createdAt: O }],
  ['updatedAt offset', { updatedAt: O }],
  ['lastTransitionAt offset', { lastTransitionAt: O }],
  ['gate.entered offset', { gate: { current: 'g', entered: O } }],
  ['gateHistory entered offset', { gateHistory: [{ gate: 'g', role: 'r', entered: O }] }],
  ['gateHistory exited offset', { gateHistory: [{ gate: 'g', role: 'r', entered: D, exited: O }] }],
  ['reviewContext offset', { reviewContext: { fromGate: 'g', fromRole: 'r', timestamp: O } }],
  ['workflow.state.startedAt offset', { workflow: wf({ state: { startedAt: O } }) }],
  ['workflow.state.completedAt offset', { workflow: wf({ state: { completedAt: O } }) }],
  ['hop state startedAt offset', { workflow: wf({ hops: { a: { status: 'ready', startedAt: O } } }) }],
  ['hop state completedAt offset', { workflow: wf({ hops: { a: { status: 'ready', completedAt: O } } }) }],
  ['cond bogus op', cond({ op: 'bogus' })],
  ['cond no op', cond({ field: 'x' })],
  ['cond gt string', cond({ op: 'gt', field: 'x', value: 'a' })],
  ['cond gt missing field', cond({ op: 'gt', value: 1 })],
  ['cond eq no value', cond({ op: 'eq', field: 'x' })],
  ['cond and nested bad', cond({ op: 'and', conditions: [{ op: 'nope' }] })],
  ['cond and no conditions', cond({ op: 'and' })],
  ['cond not missing', cond({ op: 'not' })],
  ['cond not bad', cond({ op: 'not', condition: { op: 'lt', field: 1, value: 2 } })],
  ['cond in non-array', cond({ op: 'in', field: 'f', value: 3 })],
  ['cond has_tag none', cond({ op: 'has_tag' })],
  ['cond hop_status no status', cond({ op: 'hop_status', hop: 'a' })],
  ['cond true', cond({ op: 'true' })],
  ['cond true extra', cond({ op: 'true', x: 1 })],
  [
    'cond deep ok',
    cond({ op: 'and', conditions: [{ op: 'or', conditions: [{ op: 'not', condition: { op: 'eq', field: 'f', value: 1 } }] }] }),
  ],
  ['cond string', cond('x')],
  ['cond op number', cond({ op: 1 })],
  ['lease offset', { status: 'in-progress', lease: { agent: 'a', acquiredAt: O, expiresAt: D } }],
  ['lease expires offset', { status: 'in-progress', lease: { agent: 'a', acquiredAt: D, expiresAt: O } }],
  ['lease ok', { status: 'in-progress', lease: { agent: 'a', acquiredAt: D, expiresAt: '2099-01-01T00:00:00Z' } }],
  ['lease array', { status: 'in-progress', lease: [] }],
  ['metadata array', { metadata: [] }],
  ['title empty', { title: '' }],
  ['title number', { title: 3 }],
  ['priority bad', { priority: 'urgent' }],
  ['routing.tags string', { routing: { tags: 'x' } }],
  ['routing.role num', { routing: { role: 3 } }],
  ['routing list', { routing: [] }],
  ['project empty', { project: '' }],
  ['project num', { project: 3 }],
  ['createdBy missing', { createdBy: undefined }],
  ['createdBy num', { createdBy: 3 }],
  ['parentId bad', { parentId: 'X' }],
  ['dependsOn bad', { dependsOn: ['X'] }],
  ['dependsOn string', { dependsOn: 'TASK-2026-02-10-001' }],
  ['contentHash num', { contentHash: 3 }],
  ['schemaVersion 3', { schemaVersion: 3 }],
  ['schemaVersion missing', { schemaVersion: undefined }],
  ['metadata null', { metadata: null }],
  ['lease null', { lease: null }],
  ['status bad', { status: 'todo' }],
  ['gateHistory blockers num', { gateHistory: [{ gate: 'g', role: 'r', entered: D, blockers: [1] }] }],
  ['tests then.status float', { tests: [{ given: 'a', when: 'b', then: { status: 1.5 } }] }],
  ['hop dependsOn string', { workflow: wf({ hop: { dependsOn: 'a' } }) }],
  ['hop state bad status', { workflow: wf({ hops: { a: { status: 'done' } } }) }],
  ['hop state result array', { workflow: wf({ hops: { a: { status: 'ready', result: [] } } }) }],
  ['workflow templateName num', { workflow: { ...wf(), templateName: 1 } }],
  ['hop timeout num', { workflow: wf({ hop: { timeout: 5 } }) }],
  ['hops map', { workflow: { definition: { name: 'w', hops: { a: hop } }, state: { status: 'running', hops: {} } } }],
  ['createdAt no seconds', { createdAt: '2026-02-10T10:00Z' }],
  ['createdAt date only', { createdAt: '2026-02-10' }],
  ['createdAt no zone', { createdAt: '2026-02-10T10:00:00' }],
  ['sla null', { sla: null }],
  ['requiredRunbook null', { requiredRunbook: null }],
  ['gate null', { gate: null }],
  ['gateHistory null', { gateHistory: null }],
  ['tests null', { tests: null }],
  ['contextTier null', { contextTier: null }],
  ['impossible date', { createdAt: '2026-02-30T00:00:00.000Z' }],
  ['hour 24', { createdAt: '2026-02-10T24:00:00.000Z' }],
  ['sla zero', { sla: { maxInProgressMs: 0 } }],
  ['sla panic', { sla: { onViolation: 'panic' } }],
  ['contextTier medium', { contextTier: 'medium' }],
  ['callbackDepth -1', { callbackDepth: -1 }],
  ['instructionsRef empty', { instructionsRef: '' }],
  ['requiredRunbook 3', { requiredRunbook: 3 }],
  ['resource list', { resource: ['a'] }],
  ['testsFile true', { testsFile: true }],
  ['gate current empty', { gate: { current: '', entered: D } }],
  ['gateHistory no entered', { gateHistory: [{ gate: 'g', role: 'r' }] }],
  ['tests no then', { tests: [{ given: 'a', when: 'b' }] }],
  ['reviewContext partial', { reviewContext: { fromGate: 'g' } }],
  ['workflow no hops', { workflow: { definition: { name: 'w', hops: [] }, state: { status: 'running', hops: {} } } }],
  ['gate and workflow', { gate: { current: 'g', entered: D }, workflow: wf() }],
  [
    'clean: every optional key the reference knows',
    {
      sla: { maxInProgressMs: 60000, onViolation: 'block' },
      contextTier: 'seed',
      callbackDepth: 0,
      gateHistory: [{ gate: 'g', role: 'r', entered: D, exited: D, outcome: 'complete', blockers: [] }],
      reviewContext: { fromGate: 'g', fromRole: 'r', timestamp: D },
      tests: [{ given: 'a', when: 'b', then: { status: 200 } }],
      workflow: wf({
        hop: { condition: { op: 'hop_status', hop: 'a', status: 'complete' } },
        hops: { a: { status: 'complete', startedAt: D, result: { x: 1 } } },
      }),
    },
  ],
]
const YAML = (await import('yaml')).default
const lintRoot = join(root, 'lint')
const lintCtx = tea.aofContext(lintRoot)
tea.initDataDir(lintCtx)
const base = await tea.createTask(lintCtx, { title: 'base', status: 'backlog' })
const baseText = readFileSync(base.path, 'utf8')
rmSync(base.path)
const [, baseFront, baseBody] = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(baseText)
for (const [k, [name, patch]] of CASES.entries()) {
  const id = `TASK-2026-02-09-${String(100 + k)}`
  const front = { ...YAML.parse(baseFront), id }
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) delete front[key]
    else front[key] = value
  }
  const text = `---\n${YAML.stringify(front)}---\n${baseBody}`
  const path = join(lintRoot, 'tasks', tea.isTaskStatus(front.status) ? front.status : 'backlog', `${id}.md`)
  writeFileSync(path, text)
  let refuses = false
  try {
    parseTaskFile(text)
  } catch {
    refuses = true
  }
  const reported = tea.lintDataDir(lintCtx).filter((p) => p.where.file === path)
  check(
    refuses
      ? 'lint parity: a task file the reference refuses is reported by tea lint'
      : 'lint parity: a task file the reference accepts lints clean',
    refuses === reported.length > 0,
    `${name}: reference ${refuses ? 'refuses' : 'accepts'}, tea ${reported.map((p) => p.code).join(', ') || 'clean'}`,
  )
  rmSync(path)
}

const seconds = ((performance.now() - t0) / 1000).toFixed(1)
console.log(`aof-interop: ${N} tasks, reference at ${refDir}, ${seconds} s, tree ${root}${opts.keep ? '' : ' (removed)'}`)
for (const [name, c] of Object.entries(counts))
  console.log(`${c.failed ? 'FAIL' : 'ok  '} ${String(c.ok).padStart(4)}/${c.ok + c.failed}  ${name}`)
for (const f of failures) console.log(`  - ${f}`)
if (!opts.keep) rmSync(root, { recursive: true, force: true })
process.exit(Object.values(counts).some((c) => c.failed) ? 1 : 0)
