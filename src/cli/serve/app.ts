/**
 * The routes of `tea serve` (SPEC §3.11) as one request handler over `node:http`. Every request is first checked
 * against what another page can forge (request-guard.ts); every API route needs the token when there is one (the
 * page itself holds no data and is served to anyone the guard lets through: it asks for the token); bodies are
 * JSON, validated with valibot, and every problem is reported at once (400 with `issues`). `/mcp` is the agents as
 * MCP tools (mcp-route.ts), and `/metrics` Prometheus' text (metrics.ts), behind the same checks. A run's JSON is
 * the shape `tea runs --json` prints (run-json.ts).
 */

import { realpathSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { relative, sep } from 'node:path'
import * as v from 'valibot'
import { aofContext, listTasks, TASK_STATUSES } from '../../aof/index.ts'
import type { Registry } from '../../actions/registry.ts'
import { requireAgentLoading } from '../../agent/load.ts'
import { buildInfo } from '../../core/build-info.ts'
import { enabledFeatures } from '../../feature-list.ts'
import { ERROR_CODES, type ErrorCode, TeaError } from '../../core/errors.ts'
import { sortableId } from '../../core/ids.ts'
import { toIssues } from '../../core/issues.ts'
import { isPlainObject } from '../../core/util.ts'
import type { Store, RunRecord } from '../../store/types.ts'
import { runsByCreation } from '../../store/prune-runs.ts'
import { agentView, pausedView } from './agent-view.ts'
import { listAgents, resolveAgent } from './agents.ts'
import { runJson } from './run-json.ts'
import { sseFrame } from './event-feed.ts'
import { OLD_TOKEN_COOKIE, pathParts, readJson, requestToken, sendError, sendJson } from './http-kit.ts'
import { pageHeaders, statusPage } from './page.ts'
import { requireJsonBody } from './request-guard.ts'
import { mcpRoute } from './mcp-route.ts'
import type { RunManager } from './run-manager.ts'

export interface AppOptions {
  store: Store
  /** Where the AOF task folders are (`tea aof` of the same data dir). */
  dataDir: string
  registry: Registry
  manager: RunManager
  agentsDir: string
  /** Checks a request's token; absent: no token configured (loopback only). */
  checkToken?: (given: string | undefined) => boolean
  /** Refuses a request another page forged (request-guard.ts `requestGuard`). */
  guard: (req: IncomingMessage) => void
  bodyLimit: number
}

/** Each app's `/mcp` handler (mcp-route.ts), made on the first request to it. */
const mcpRoutes = new WeakMap<AppOptions, (req: IncomingMessage, res: ServerResponse) => Promise<void>>()

const RUN_ID = v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'a run id is 1-128 letters, digits, ".", "_" or "-"'))
// A plain object: valibot's record takes an array as an object of index keys.
const INPUT = v.custom<Record<string, unknown>>(
  isPlainObject,
  (issue) => `Invalid type: Expected an object of input keys but received ${issue.received}`,
)
const StartBody = v.strictObject({ agent: v.pipe(v.string(), v.minLength(1)), input: v.optional(INPUT), run_id: v.optional(RUN_ID) })
const ResumeBody = v.strictObject({ input: v.optional(INPUT) })

function parseBody<T extends v.GenericSchema>(schema: T, body: unknown): v.InferOutput<T> {
  const r = v.safeParse(schema, body)
  if (r.success) return r.output
  throw new TeaError('BAD_REQUEST', 'the request body is not what this route takes', { issues: toIssues(r.issues) })
}

export function createApp(opts: AppOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(opts, req, res).catch((e: unknown) => sendError(res, e))
  }
}

async function handle(opts: AppOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  opts.guard(req)
  const { path, parts, query } = pathParts(req.url ?? '/')
  const method = req.method ?? 'GET'
  if (method === 'GET' && path === '/') {
    // The page holds no data: it is the token's holder, not its keeper. A wrong token in the link is told at once.
    const given = query.get('token')
    if (opts.checkToken && given !== null && !opts.checkToken(given)) throw unauthorized()
    const stale = new RegExp(`(?:^|;\\s*)${OLD_TOKEN_COOKIE}=`).test(req.headers.cookie ?? '')
    res.writeHead(200, {
      ...pageHeaders(),
      // Set by an older tea serve, sent by the browser to every port of this host: gone.
      ...(stale && { 'set-cookie': `${OLD_TOKEN_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict` }),
    })
    res.end(statusPage())
    return
  }
  if (opts.checkToken && !opts.checkToken(requestToken(req))) throw unauthorized()
  requireJsonBody(req)
  if (path === '/mcp') {
    let route = mcpRoutes.get(opts)
    if (!route) mcpRoutes.set(opts, (route = mcpRoute(opts)))
    return route(req, res)
  }
  const named = parts[0] === 'api' && (parts[1] === 'runs' || parts[1] === 'agents')
  const route = `${method} /${parts.map((p, i) => (named && i === 2 ? (parts[1] === 'runs' ? ':id' : ':name') : p)).join('/')}`
  const id = parts[2] ?? ''
  switch (route) {
    case 'GET /api/health':
      return sendJson(res, 200, { ok: true, version: buildInfo().version, features: enabledFeatures(), ...opts.manager.counts })
    case 'GET /api/agents':
      return sendJson(res, 200, listAgents(opts.agentsDir))
    case 'GET /api/agents/:name': {
      const file = resolveAgent(opts.agentsDir, id)
      const spec = await requireAgentLoading(file, opts.registry)
      return sendJson(res, 200, agentView(spec, agentFileOf(opts, file) ?? id))
    }
    case 'GET /metrics':
      return sendMetrics(opts, res)
    case 'GET /api/runs':
      return sendJson(res, 200, await listRuns(opts))
    case 'GET /api/tasks':
      return sendJson(res, 200, taskBoard(opts.dataDir))
    case 'POST /api/runs': {
      const body = parseBody(StartBody, await readJson(req, opts.bodyLimit))
      const spec = await requireAgentLoading(resolveAgent(opts.agentsDir, body.agent), opts.registry)
      return sendJson(res, 201, await opts.manager.start(spec, body.run_id ?? sortableId(), body.input))
    }
    case 'GET /api/runs/:id':
      return sendJson(res, 200, await oneRun(opts, id))
    case 'GET /api/runs/:id/events':
      return streamEvents(opts, id, req, res)
    case 'POST /api/runs/:id/resume': {
      const body = parseBody(ResumeBody, await readJson(req, opts.bodyLimit))
      return sendJson(res, 202, await opts.manager.resume(id, body.input))
    }
    case 'POST /api/runs/:id/cancel': {
      await readJson(req, opts.bodyLimit)
      if (!opts.manager.liveStatus(id) && !(await opts.store.getRun(id))) throw notFound(id)
      opts.manager.cancel(id)
      return sendJson(res, 202, { run_id: id, status: 'cancelling' })
    }
  }
  throw new TeaError('NOT_FOUND', `no route ${method} ${path}`, { hint: 'docs/serve.md lists the routes' })
}

function unauthorized(): TeaError {
  return new TeaError('UNAUTHORIZED', 'this tea serve needs its token: Authorization: Bearer <token>', {
    hint: 'the token is in the file given to --token-file; a browser opens /?token=<token> once per tab',
  })
}

/** The AOF task board: every status folder with its tasks (id, title, assigned agent), unreadable files apart. */
function taskBoard(dataDir: string): Record<string, unknown> {
  const { tasks, problems } = listTasks(aofContext(dataDir))
  const board: Record<string, Array<Record<string, unknown>>> = Object.fromEntries(TASK_STATUSES.map((s) => [s, []]))
  for (const t of tasks) {
    const agent = (t.data.routing as { agent?: unknown } | undefined)?.agent
    board[t.status]!.push({ id: t.id, title: t.data.title, agent: typeof agent === 'string' ? agent : null })
  }
  return { statuses: board, problems: problems.map((p) => ({ file: p.where.file, message: p.message })) }
}

function notFound(id: string): TeaError {
  return new TeaError('RUN_NOT_FOUND', `no run ${id}`, { details: { runId: id } })
}

const iso = (ms: number) => new Date(ms).toISOString()

/** The agent file's path inside the agents folder (`/`-separated), or undefined when it is elsewhere. */
function agentFileOf(opts: AppOptions, path: string): string | undefined {
  let root: string
  try {
    root = resolveAgentsRoot(opts.agentsDir)
  } catch {
    return undefined
  }
  const rel = relative(root, path)
  return rel && !rel.startsWith('..') && !rel.startsWith(sep) ? rel.split(sep).join('/') : undefined
}

const agentRoots = new Map<string, string>()
function resolveAgentsRoot(dir: string): string {
  let root = agentRoots.get(dir)
  if (!root) agentRoots.set(dir, (root = realpathSync(dir)))
  return root
}

function runView(opts: AppOptions, r: RunRecord): Record<string, unknown> {
  const hint = r.status === 'failed' ? opts.manager.hintOf(r.id) : undefined
  const about = r.error && Object.hasOwn(ERROR_CODES, r.error.code) ? ERROR_CODES[r.error.code as ErrorCode][1] : undefined
  const view = runJson(r)
  return r.error ? { ...view, error: { ...r.error, ...(hint && { hint }), ...(about && { about }) } } : view
}

async function listRuns(opts: AppOptions): Promise<Array<Record<string, unknown>>> {
  const now = iso(Date.now())
  const queued = opts.manager.queued().map((q) => ({ ...q, status: 'queued', node: null, step: 0, created_at: now, updated_at: now }))
  return [...queued, ...(await runsByCreation(opts.store)).map((r) => runView(opts, r))]
}

async function oneRun(opts: AppOptions, id: string): Promise<Record<string, unknown>> {
  const run = await opts.store.getRun(id)
  if (!run) {
    if (opts.manager.liveStatus(id) === 'queued') return { run_id: id, status: 'queued', state: {} }
    throw notFound(id)
  }
  const checkpoint = await opts.store.loadLatest(id)
  const file = agentFileOf(opts, run.agentPath)
  let paused: object | undefined
  if (run.status === 'interrupted' && checkpoint) {
    // What the run waits for, from the agent as it is now (an edit since is the person's to judge); its node at least.
    const spec = await requireAgentLoading(run.agentPath, opts.registry).catch(() => undefined)
    paused = spec
      ? pausedView(spec, run.node, checkpoint.cursor, checkpoint.state, wroteBy(opts, id, run.node))
      : {
          node: run.node,
          when: checkpoint.cursor.skipInterruptBefore ? 'before' : 'after',
          message: `paused at node '${run.node}'`,
          keys: [],
          values: {},
        }
  }
  return { ...runView(opts, run), agent_file: file ?? null, ...(paused && { paused }), state: checkpoint?.state ?? {} }
}

/** The keys the run's last node wrote, when this process ran it and that node is `node`. */
function wroteBy(opts: AppOptions, id: string, node: string | null): string[] {
  const last = opts.manager.lastWrite(id)
  return last && last.node === node ? last.keys : []
}

/** `GET /metrics`: Prometheus' text format (metrics.ts), runs by status read from the store now. */
async function sendMetrics(opts: AppOptions, res: ServerResponse): Promise<void> {
  const byStatus: Record<string, number> = { queued: opts.manager.counts.queued }
  for (const r of await opts.store.listRuns()) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1
  const body = opts.manager.metrics.render(byStatus, opts.manager.counts.active)
  res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' })
  res.end(body)
}

/**
 * SSE: the run's events so far, then live ones, ending after its final event. A run this process did not run
 * (before a restart) has no feed: its end is told from the store as the one event `--stream` would have ended with.
 */
async function streamEvents(opts: AppOptions, id: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const feed = opts.manager.feed(id)
  const run = feed ? undefined : await opts.store.getRun(id)
  if (!feed && !run) throw notFound(id)
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' })
  res.flushHeaders()
  if (!feed) {
    const checkpoint = await opts.store.loadLatest(id)
    if (run!.status === 'completed') res.write(sseFrame({ type: 'complete', state: checkpoint?.state ?? {} }))
    else if (run!.status === 'failed' && run!.error)
      res.write(sseFrame({ type: 'error', ...(run!.error.node && { node: run!.error.node }), error: run!.error }))
    else if (run!.status === 'interrupted') res.write(sseFrame({ type: 'interrupt', node: run!.node ?? '', when: 'after', runId: id }))
    res.end()
    return
  }
  const unsubscribe = feed.subscribe({
    write: (frame) => res.write(frame),
    onDrain: (resume) => res.once('drain', resume),
    end: () => res.end(),
    drop: () => res.destroy(),
  })
  req.on('close', unsubscribe)
}
