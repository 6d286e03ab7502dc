/**
 * The ActionContext the planning benchmarks hand to plan.execute: a store, a run id and a state, everything else
 * refused. Untyped (plain data and functions) so that bench/plan-dispatch.ts can give it to another tree's src/.
 */
import { tmpdir } from 'node:os'

export function benchContext(store: unknown, runId: string, state: Record<string, unknown> = {}) {
  const fail = (): never => {
    throw new Error('not used by this benchmark')
  }
  return {
    runId,
    node: 'bench',
    state,
    variables: {},
    settings: {
      llm: {},
      max_steps: 1000,
      workspace: tmpdir(),
      allow_inline_code: true,
      run_timeout: 30,
      checkpoint_keep: 3,
      max_template_bytes: 1 << 20,
      sections: {},
    },
    llm: { call: fail, close: async () => {} },
    store,
    signal: new AbortController().signal,
    emit: () => {},
    runNode: fail,
    render: fail,
    listActions: () => [],
    invoke: fail,
  }
}

const idOf = (task: unknown): string => (task as { args: { subtask: { id: string } } }).args.subtask.id

/**
 * A pool that answers every subtask at once in this thread with its id (batches too): the planning layer measured
 * without workers. Untyped, as benchContext, for another tree's src/.
 */
export function instantPool() {
  return {
    maxThreads: 2,
    started: true,
    run: async (task: unknown) => ({ value: idOf(task) }),
    runBatch(members: Array<{ task: unknown }>, o: { onStart(i: number): void; onSettle(i: number, r: unknown): void }) {
      const done = (async () => {
        await undefined
        members.forEach((m, i) => {
          if (i > 0) o.onStart(i)
          o.onSettle(i, { ok: true, result: { value: idOf(m.task) } })
        })
        return []
      })()
      return { withdraw: () => [], done }
    },
    close: async () => {},
  }
}
