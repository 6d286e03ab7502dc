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

// Task files the reference refuses: tea's lint must say so.
const MUTATIONS = [
  'sla: { maxInProgressMs: 0 }',
  'sla: { onViolation: panic }',
  'contextTier: medium',
  'callbackDepth: -1',
  'instructionsRef: ""',
  'requiredRunbook: 3',
  'resource: [a]',
  'testsFile: true',
  'gate: { current: "", entered: 2026-02-10T10:00:00.000Z }',
  'gateHistory: [{ gate: g, role: r }]',
  'tests: [{ given: a, when: b }]',
  'reviewContext: { fromGate: g }',
  'workflow: { definition: { name: w, hops: [] }, state: { status: running, hops: {} } }',
  'gate: { current: g, entered: 2026-02-10T10:00:00.000Z }\nworkflow: { definition: { name: w, hops: [{ id: a, role: r }] }, state: { status: running, hops: {} } }',
  'METADATA metadata: []',
  'DATE 2026-02-30T00:00:00.000Z',
  'DATE 2026-02-10T24:00:00.000Z',
]
const lintRoot = join(root, 'lint')
const lintCtx = tea.aofContext(lintRoot)
tea.initDataDir(lintCtx)
const base = await tea.createTask(lintCtx, { title: 'base', status: 'backlog' })
const baseText = readFileSync(base.path, 'utf8')
rmSync(base.path)
for (const [k, m] of MUTATIONS.entries()) {
  const id = `TASK-2026-02-09-${String(100 + k)}`
  let text = baseText.replace(`id: ${base.id}`, `id: ${id}`)
  if (m.startsWith('DATE ')) text = text.replace(/createdAt: .*/, `createdAt: ${m.slice(5)}`)
  else if (m.startsWith('METADATA ')) text = text.replace('metadata: {}', m.slice(9))
  else text = text.replace(/\n---\n\n/, `\n${m}\n---\n\n`)
  const path = join(lintRoot, 'tasks', 'backlog', `${id}.md`)
  writeFileSync(path, text)
  let refuses = false
  try {
    parseTaskFile(text)
  } catch {
    refuses = true
  }
  const reported = tea
    .lintDataDir(lintCtx)
    .filter((p) => p.where.file === path && (p.code === 'reference_rejects' || p.code === 'unreadable_task'))
  check(
    'lint parity: a task file the reference refuses is reported by tea lint',
    refuses && reported.length > 0,
    `${m}: reference ${refuses ? 'refuses' : 'accepts'}, tea ${reported.length} problem(s)`,
  )
}

const seconds = ((performance.now() - t0) / 1000).toFixed(1)
console.log(`aof-interop: ${N} tasks, reference at ${refDir}, ${seconds} s, tree ${root}${opts.keep ? '' : ' (removed)'}`)
for (const [name, c] of Object.entries(counts))
  console.log(`${c.failed ? 'FAIL' : 'ok  '} ${String(c.ok).padStart(4)}/${c.ok + c.failed}  ${name}`)
for (const f of failures) console.log(`  - ${f}`)
if (!opts.keep) rmSync(root, { recursive: true, force: true })
process.exit(Object.values(counts).some((c) => c.failed) ? 1 : 0)
