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
