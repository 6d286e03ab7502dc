/**
 * One timed engine run through the engine's run lifecycle (startRun), as test/engine/harness.ts does, against one
 * of three stores:
 * - `none`: checkpoint writes are no-ops — the engine's own cost, nothing stored;
 * - `memory`: the in-memory store (checkpointing "off": no disk, but records are still built, copied and sized);
 * - `lmdb`: the real store in a fresh temp dir, every commit fsynced. runAgent returns only after the final
 *   snapshot and the run record have committed, so its wall time covers every durable write.
 * Load and compile happen once per agent, outside the timed part (they are reported separately).
 */

import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TeaError } from '../src/core/errors.ts'
import type { Registry } from '../src/actions/registry.ts'
import { loadAgentText } from '../src/agent/load.ts'
import { formatProblem } from '../src/agent/problems.ts'
import type { AgentSpec } from '../src/agent/types.ts'
import { compileAgent, type CompiledAgent } from '../src/engine/compile.ts'
import { startRun } from '../src/engine/lifecycle.ts'
import type { LlmClient } from '../src/llm/types.ts'
import { createMemoryStore } from '../src/store/memory-store.ts'
import { openLmdbStore } from '../src/store/lmdb-store.ts'
import type { Store } from '../src/store/types.ts'

export type StoreKind = 'none' | 'memory' | 'lmdb'

export interface Prepared {
  spec: AgentSpec
  agent: CompiledAgent
  registry: Registry
  loadMs: number
  compileMs: number
}

export function prepare(yaml: string, registry: Registry): Prepared {
  const t0 = performance.now()
  const { spec, problems } = loadAgentText(yaml, join(tmpdir(), 'bench-agent.yaml'), registry)
  if (!spec)
    throw new Error(
      `bench agent invalid: ${problems
        .slice(0, 3)
        .map((p) => formatProblem('bench-agent.yaml', p))
        .join('; ')}`,
    )
  const t1 = performance.now()
  const agent = compileAgent(spec, registry)
  return { spec, agent, registry, loadMs: t1 - t0, compileMs: performance.now() - t1 }
}

const noModel: LlmClient = {
  call: async () => {
    throw new TeaError('LLM_UNREACHABLE', 'the engine benchmark has no model')
  },
  close: async () => {},
}

function nullCheckpoints(store: Store): Store {
  return { ...store, appendStep: async () => {}, snapshot: async () => {} }
}

export interface Opened {
  store: Store
  dir?: string
  close(): Promise<void>
}

export function openStore(kind: StoreKind): Opened {
  if (kind !== 'lmdb') {
    const store = kind === 'none' ? nullCheckpoints(createMemoryStore()) : createMemoryStore()
    return { store, close: () => store.close() }
  }
  const dir = mkdtempSync(join(tmpdir(), 'tea-engine-bench-'))
  const store = openLmdbStore(dir)
  return {
    store,
    dir,
    async close() {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * Runs the agent to completion on `store`; returns wall ms of runAgent, the CPU ms this process used meanwhile
 * (all its threads: with LMDB that includes lmdb-js's commit thread, not the time waiting for fsync), and the
 * final state. CPU time is the steadier figure when other processes share the cores.
 */
export async function timedRun(
  p: Prepared,
  store: Store,
  runId: string,
): Promise<{ ms: number; cpuMs: number; state: Record<string, unknown> }> {
  const c = process.cpuUsage()
  const t = performance.now()
  // Through the run lifecycle, as the CLI runs: the run record is inside the timed part; the node wiring
  // (compileAgent) is done once per agent and kept by the lifecycle, so after the warm-up rounds it is not.
  const outcome = await startRun(p.spec, { store, registry: p.registry, llm: noModel }, { runId })
  const ms = performance.now() - t
  const cpu = process.cpuUsage(c)
  if (outcome.status !== 'completed') throw new Error(`bench run ${runId} ended ${outcome.status}: ${outcome.error?.message}`)
  if (outcome.step !== p.spec.nodes.length) throw new Error(`bench run ${runId} ran ${outcome.step} steps, expected ${p.spec.nodes.length}`)
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, state: outcome.state }
}

export interface CheckpointBytes {
  steps: number
  /** Step records written and their bytes (key + msgpack value), as the store counts them. */
  stepRecords: number
  stepBytes: number
  snapshots: number
  snapshotBytes: number
  /** `store.checkpointBytes(runId)` after the run: what retention kept. */
  retained: number
  fileSize: number
  /** Blocks actually allocated to the LMDB file (it is sparse/preallocated). */
  fileAllocated: number
}

/**
 * An untimed LMDB run that counts every checkpoint record written, by reading the store's own byte figures
 * (`checkpointStats`, updated synchronously as each record is encoded) around each write.
 */
export async function countCheckpointBytes(p: Prepared): Promise<CheckpointBytes> {
  const opened = openStore('lmdb')
  const inner = opened.store
  const runId = '01jd3k5m7qabcdefgh' // the shape of a real run id (18 chars)
  const c = { stepRecords: 0, stepBytes: 0, snapshots: 0, snapshotBytes: 0 }
  const counting: Store = {
    ...inner,
    appendStep(id, entry) {
      const before = inner.checkpointStats!(id)
      const done = inner.appendStep(id, entry)
      const after = inner.checkpointStats!(id)
      c.stepRecords++
      c.stepBytes += after.updateBytes - (after.updates > before.updates ? before.updateBytes : 0)
      return done
    },
    snapshot(id, entry, keep) {
      const done = inner.snapshot(id, entry, keep)
      c.snapshots++
      c.snapshotBytes += inner.checkpointStats!(id).snapshotBytes
      return done
    },
  }
  await timedRun(p, counting, runId)
  const retained = await inner.checkpointBytes(runId)
  await inner.flush()
  const st = statSync(join(opened.dir!, 'tea.lmdb'))
  await opened.close()
  return { steps: p.spec.nodes.length, ...c, retained, fileSize: st.size, fileAllocated: st.blocks * 512 }
}
