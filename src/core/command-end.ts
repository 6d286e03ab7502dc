/**
 * What must be undone when the CLI's command ends, whatever way it ends: a piece that starts something that
 * outlives a run (an MCP server's process, actions/tools/mcp/servers.ts) says so here when it first starts one, and
 * the CLI runs these once its command is done (cli/main.ts). A registry filled on use, not on import, so the CLI
 * names no such piece and `tea run` of an agent that uses none loads none of them.
 */

const ends = new Set<() => Promise<void>>()

/** Runs `end` when the command ends (once, however often it is added). */
export function atCommandEnd(end: () => Promise<void>): void {
  ends.add(end)
}

/** Runs every end added so far, each once; one that fails does not keep the others from running. */
export async function endCommand(): Promise<void> {
  const all = [...ends]
  ends.clear()
  await Promise.allSettled(all.map((end) => end()))
}
