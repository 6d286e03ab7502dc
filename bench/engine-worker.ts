/**
 * The two measuring processes of the engine benchmark. tea and LangGraph.js run in separate child processes,
 * driven round by round by the parent (engine.bench.ts), because LangGraph cannot share a process fairly: once
 * a graph has been invoked, its AsyncLocalStorage context tracking stays on for the whole process and every
 * promise and await in it gets slower — tea's per-node cost rose by about a third after one LangGraph invoke
 * (bench/langgraph-contamination.ts shows it).
 *
 * Protocol (IPC messages): the parent sends {type: 'warm' | 'round' | 'bytes' | 'exit', round?}; the child
 * answers each with one message: {type: 'ok', samples?, cpuMs, info?, bytes?} or {type: 'error', message}.
 */

import { benchRegistry, KINDS, linearAgentYaml, type Kind } from './engine-agents.ts'
import { countCheckpointBytes, openStore, prepare, timedRun, type CheckpointBytes, type Prepared, type StoreKind } from './engine-run.ts'
import { buildLinearGraph, type LangGraphMode, type LinearGraph } from './langgraph-linear.ts'

export const SIZES = [200, 2000] as const
export const STORES: StoreKind[] = ['none', 'memory', 'lmdb']
export const LG_MODES: LangGraphMode[] = ['none', 'memory']

export type Role = 'tea' | 'lg'
export interface Request {
  type: 'warm' | 'round' | 'bytes' | 'exit'
  round?: number
  /** LangGraph at 2,000 nodes runs in the first rounds only (seconds per run). */
  lg2000Rounds?: { none: number; memory: number }
}
/** [key, wall ms, CPU ms] per run. */
export type Sample = [string, number, number]
export interface Reply {
  type: 'ok' | 'error'
  samples?: Sample[]
  /** CPU ms the child used while answering (the parent counts it as its own when it measures foreign load). */
  cpuMs: number
  info?: Array<[string, number, number]>
  bytes?: Array<[Kind, CheckpointBytes]>
  message?: string
}

const key = (...parts: Array<string | number>): string => parts.join('/')

async function teaRole(): Promise<(req: Request) => Promise<Omit<Reply, 'cpuMs' | 'type'>>> {
  const registry = benchRegistry()
  const agents = new Map<string, Prepared>()
  for (const kind of KINDS) for (const n of SIZES) agents.set(key(kind, n), prepare(linearAgentYaml(kind, n), registry))
  const once = async (p: Prepared, store: StoreKind, runId: string): Promise<Sample> => {
    const opened = openStore(store)
    try {
      const { ms, cpuMs, state } = await timedRun(p, opened.store, runId)
      if (p.spec.name.startsWith('linear-run-') && state.i !== p.spec.nodes.length)
        throw new Error(`run: agent ended with i=${String(state.i)}`)
      return ['', ms, cpuMs]
    } finally {
      await opened.close()
    }
  }
  return async (req) => {
    if (req.type === 'warm') {
      for (let w = 0; w < 3; w++) for (const [k, p] of agents) for (const s of STORES) await once(p, s, `warm-${w}-${k}-${s}`)
      return { info: [...agents].map(([k, p]) => [k, p.loadMs, p.compileMs]) }
    }
    if (req.type === 'bytes') {
      const bytes: Array<[Kind, CheckpointBytes]> = []
      for (const kind of KINDS) bytes.push([kind, await countCheckpointBytes(agents.get(key(kind, 2000))!)])
      return { bytes }
    }
    const samples: Sample[] = []
    for (const n of SIZES) {
      for (const kind of KINDS) {
        for (const s of STORES) {
          const [, ms, cpuMs] = await once(agents.get(key(kind, n))!, s, `r${req.round}`)
          samples.push([key('tea', kind, s, n), ms, cpuMs])
        }
      }
    }
    return { samples }
  }
}

async function lgRole(): Promise<(req: Request) => Promise<Omit<Reply, 'cpuMs' | 'type'>>> {
  const graphs = new Map<number, LinearGraph>()
  for (const n of SIZES) graphs.set(n, await buildLinearGraph(n))
  const once = async (n: number, mode: LangGraphMode, run: number): Promise<Sample> => {
    const c = process.cpuUsage()
    const { ms, i } = await graphs.get(n)!.invoke(mode, run)
    const cpu = process.cpuUsage(c)
    if (i !== n) throw new Error(`LangGraph ${n}/${mode} ended with i=${i}`)
    return [key('lg', mode, n), ms, (cpu.user + cpu.system) / 1000]
  }
  return async (req) => {
    if (req.type === 'warm') {
      for (let w = 0; w < 2; w++) for (const mode of LG_MODES) await once(200, mode, -1 - w)
      await once(2000, 'none', -1)
      return { info: [...graphs].map(([n, g]) => [String(n), g.compileMs, 0]) }
    }
    if (req.type !== 'round') return {}
    const r = req.round ?? 0
    const samples: Sample[] = []
    for (const n of SIZES) {
      for (const mode of LG_MODES) {
        if (n === 2000 && r >= (req.lg2000Rounds?.[mode] ?? 0)) continue
        samples.push(await once(n, mode, r))
      }
    }
    return { samples }
  }
}

/** Runs this process as a measuring child: answers the parent's requests until 'exit'. */
export async function serve(role: Role): Promise<void> {
  const handle = role === 'tea' ? await teaRole() : await lgRole()
  const send = (reply: Reply): void => void process.send!(reply)
  process.on('message', (req: Request) => {
    if (req.type === 'exit') return void process.disconnect()
    const c = process.cpuUsage()
    const cpuMs = (): number => {
      const u = process.cpuUsage(c)
      return (u.user + u.system) / 1000
    }
    handle(req).then(
      (body) => send({ type: 'ok', ...body, cpuMs: cpuMs() }),
      (e: unknown) => send({ type: 'error', message: e instanceof Error ? (e.stack ?? e.message) : String(e), cpuMs: cpuMs() }),
    )
  })
  send({ type: 'ok', cpuMs: 0 })
}
