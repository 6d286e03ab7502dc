/**
 * Where a GGUF model named in an agent is: `~/` is the home folder, and a relative path starts from the agent
 * file's folder (settings.llm.model_dir, set by the loader), or the current folder for a model given without an
 * agent file.
 */

import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'

export function ggufPath(path: string, agentDir: string | undefined): string {
  const p = path.trim()
  if (p === '~' || p.startsWith('~/')) return join(homedir(), p.slice(1))
  return isAbsolute(p) ? resolve(p) : resolve(agentDir ?? process.cwd(), p)
}
