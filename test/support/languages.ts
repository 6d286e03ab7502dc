/**
 * Agents for the tests of `run:` code in Prolog, Lua and Python (test/prolog, test/lua, test/python), which ask
 * the same questions of each language: what a build without the engine says, and whether parallel branches are
 * isolated and a runaway one is stopped alone.
 */

import { builtinActions } from '../../src/actions/builtins.ts'
import { createRegistry } from '../../src/actions/registry.ts'
import { loadAgentText } from '../../src/agent/load.ts'
import { FEATURE_FACTS, targetsWith } from '../../src/feature-list.ts'
import type { Problem } from '../../src/agent/problems.ts'
import { testActions } from '../engine/harness.ts'

const indent = (text: string, by: string): string =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => `${by}${l}`)
    .join('\n')

export interface Branch {
  run: string
  /** Seconds; a branch with a limit also has `on_error: continue`, so the run goes on when it is stopped. */
  timeout?: number
}

/** An agent whose `split` fans out to `branches` (in this order), each a `run:` in `language`; `join` puts their results in `state.results`. */
export function fanOutAgent(language: string, branches: Record<string, Branch>): string {
  const nodes = Object.entries(branches).map(([name, b]) =>
    [
      `  - name: ${name}`,
      `    language: ${language}`,
      ...(b.timeout === undefined ? [] : [`    timeout: ${b.timeout}`, '    on_error: { mode: continue }']),
      '    run: |',
      indent(b.run, '      '),
      '    goto: join',
    ].join('\n'),
  )
  return [
    'name: branches',
    'nodes:',
    '  - name: split',
    '    run: "return {}"',
    ...nodes,
    '  - name: join',
    '    run: "return { results: state.parallel_results }"',
    'edges:',
    `  - { from: split, to: [${Object.keys(branches).join(', ')}], fan_in: join }`,
    '',
  ].join('\n')
}

/** The branch results of a fanOutAgent run, as plain JSON (values made by run: code live in another realm). */
export function branchResults(state: Record<string, unknown>): Array<Record<string, unknown>> {
  return JSON.parse(JSON.stringify(state.results)) as Array<Record<string, unknown>>
}

/** The problems of a one-node agent in `language`, loaded by a build without any language engine. */
export function loadWithoutEngines(language: string, code: string): Problem[] {
  const lacking = (name: string) => {
    const feature = FEATURE_FACTS.languages.find((l) => name === `${l}.run`)
    return feature === undefined ? undefined : { feature, builds: targetsWith(feature) }
  }
  const core = createRegistry([...builtinActions(), ...testActions()], { ...FEATURE_FACTS, lacking })
  return loadAgentText(`name: c\nnodes:\n  - name: x\n    language: ${language}\n    run: ${JSON.stringify(code)}\n`, '/tmp/c.yaml', core)
    .problems
}
