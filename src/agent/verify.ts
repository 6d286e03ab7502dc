/**
 * `tea validate`'s second pass over a loaded agent: each node's action may check its parameters as written more
 * deeply than loading does (Action.verify: Prolog code is read by the Prolog engine, so a syntax error is found
 * before a run, with its line). Asynchronous and possibly costly, so it is not part of loading.
 */

import type { Registry } from '../actions/registry.ts'
import type { AgentSpec } from './types.ts'

export interface Finding {
  node: string
  action: string
  message: string
}

export async function verifyAgent(
  spec: AgentSpec,
  registry: Pick<Registry, 'get'>,
  signal: AbortSignal = new AbortController().signal,
): Promise<Finding[]> {
  const findings: Finding[] = []
  const ctx = { settings: spec.settings, action: (name: string) => registry.get(name), signal }
  for (const node of spec.nodes) {
    const action = node.uses === undefined ? undefined : registry.get(node.uses)
    if (!action?.verify) continue
    for (const message of await action.verify(node.with ?? {}, ctx)) findings.push({ node: node.name, action: action.name, message })
  }
  return findings
}
