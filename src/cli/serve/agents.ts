/**
 * The agents folder of `tea serve`: the only files the API may run. A request names an agent by name (`hello`
 * finds `hello.yaml` or `hello.yml`) or by a path relative to the folder (`team/hello.yaml`). Whatever it names
 * must resolve — symbolic links followed — to a file inside the folder: `../`, an absolute path, or a link
 * leading out is refused (PATH_OUTSIDE_AGENTS), so an API client cannot run an arbitrary YAML file of the board.
 */

import { readdirSync, realpathSync, statSync } from 'node:fs'
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import { TeaError } from '../../core/errors.ts'

const AGENT_FILE = /\.ya?ml$/
/** How deep `GET /api/agents` looks into subfolders. */
const MAX_DEPTH = 4

export function listAgents(dir: string): Array<{ name: string; file: string }> {
  const found: Array<{ name: string; file: string }> = []
  const walk = (sub: string, depth: number): void => {
    let entries: import('node:fs').Dirent[]
    try {
      entries = readdirSync(join(dir, sub), { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name.startsWith('.')) continue
      const rel = sub ? `${sub}/${e.name}` : e.name
      if (e.isDirectory() && depth < MAX_DEPTH) walk(rel, depth + 1)
      else if (AGENT_FILE.test(e.name)) found.push({ name: rel.replace(AGENT_FILE, ''), file: rel })
    }
  }
  walk('', 0)
  return found
}

/** The absolute path of the agent `name` names inside `dir`. */
export function resolveAgent(dir: string, name: string): string {
  if (!name || name.includes('\0') || isAbsolute(name)) throw outside(name)
  const root = realDir(dir)
  const candidates = AGENT_FILE.test(name) ? [name] : [`${name}.yaml`, `${name}.yml`, name]
  for (const candidate of candidates) {
    const lexical = resolve(root, candidate)
    if (!inside(root, lexical)) throw outside(name)
    let real: string
    try {
      real = realpathSync(lexical)
    } catch {
      continue
    }
    if (!inside(root, real)) throw outside(name)
    if (statSync(real).isFile()) return real
  }
  throw new TeaError('AGENT_NOT_FOUND', `no agent '${name}' in ${dir}`, {
    hint: 'GET /api/agents lists the agents there',
    details: { agent: name },
  })
}

function realDir(dir: string): string {
  try {
    return realpathSync(dir)
  } catch {
    throw new TeaError('AGENT_NOT_FOUND', `the agents folder ${dir} does not exist`, { hint: 'give tea serve --agents DIR' })
  }
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel)
}

function outside(name: string): TeaError {
  return new TeaError('PATH_OUTSIDE_AGENTS', `agent '${name}' is outside the agents folder`, {
    hint: 'name an agent by its file name or a path relative to the agents folder',
    details: { agent: name },
  })
}
