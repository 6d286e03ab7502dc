/** What `tea mcp` does (its definition, flags and help are in commands/mcp.ts). */

import { resolve } from 'node:path'
import { lazyRegistry } from '../catalog.ts'
import { TeaError } from '../core/errors.ts'
import { dataDirOf } from './data-dir.ts'
import { EXIT } from './exit.ts'
import type { Io } from './io.ts'
import { agentRuns } from './mcp/agent-runs.ts'
import { listAgents } from './serve/agents.ts'
import { modelClient, openStore } from './run-output.ts'
import { stopOnSignals } from './signals.ts'

export async function mcpCommand(
  { flags }: { flags: { agents: string; 'data-dir'?: string; model?: string; replay?: string } },
  io: Io,
): Promise<number> {
  const dir = resolve(io.cwd, flags.agents)
  if (listAgents(dir).length === 0)
    throw new TeaError('USAGE', `--agents ${flags.agents}: no agent files (*.yaml, *.yml) there`, { details: { dir } })
  const dataDir = dataDirOf(flags['data-dir'], io)
  const store = await openStore(dataDir)
  const stop = stopOnSignals(io, 'tea mcp', 'the current checkpoints')
  try {
    const calls = agentRuns({
      dir,
      registry: lazyRegistry(),
      store,
      dataDir,
      llm: await modelClient(io, flags),
      ...(flags.model && { model: flags.model }),
      warn: (line) => io.err(`tea mcp: warning: ${line}\n`),
    })
    const { serveStdio } = await import('./mcp/server.ts')
    await serveStdio(calls, stop.signal)
    return EXIT.ok
  } finally {
    stop.dispose()
    await store.close()
  }
}
