/**
 * An agent path given on the command line, checked before it is loaded: a path with no file behind it, a folder,
 * or a file tea may not read is AGENT_NOT_FOUND with a hint that points somewhere useful (the agent files near
 * the path, the examples folder), not the bare errno the loader would meet (ENOENT, EISDIR, EACCES).
 */

import { readdirSync, statSync } from 'node:fs'
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { TeaError } from '../core/errors.ts'
import { closest } from '../core/util.ts'

/** Agent files named in a hint at most. */
const LISTED = 5
const AGENT_FILE = /\.ya?ml$/i

/** Returns when `path` (relative to `cwd`) is a file tea can read; throws AGENT_NOT_FOUND otherwise. */
export function requireAgentPath(path: string, cwd: string): void {
  const full = resolve(cwd, path)
  let code: string | undefined
  try {
    if (statSync(full).isDirectory()) code = 'EISDIR'
    else return
  } catch (e) {
    code = (e as NodeJS.ErrnoException).code ?? 'EIO'
  }
  throw agentPathError(path, full, cwd, code)
}

/** The error for `path` (`full` resolved) that could not be read with errno `code`. */
export function agentPathError(path: string, full: string, cwd: string, code: string): TeaError {
  // As the user wrote it: relative to the working directory, or absolute.
  const shown = (file: string): string => (isAbsolute(path) ? file : relative(cwd, file) || '.')
  if (code === 'EISDIR') {
    const inside = agentFilesIn(full, shown)
    return new TeaError('AGENT_NOT_FOUND', `${path} is a folder; an agent is one YAML file`, {
      details: { path: full },
      hint:
        inside.length === 1
          ? `did you mean ${inside[0]}?`
          : inside.length
            ? `the agent files in it: ${list(inside)}`
            : `there is no agent file (*.yaml, *.yml) in it${examplesHint(cwd)}`,
    })
  }
  if (code === 'EACCES' || code === 'EPERM')
    return new TeaError('AGENT_NOT_FOUND', `cannot read agent file ${path}: permission denied`, {
      details: { path: full },
      hint: `'ls -l ${shown(full)}' shows its owner and mode; tea reads it as the user it runs as`,
    })
  if (code !== 'ENOENT' && code !== 'ENOTDIR')
    return new TeaError('AGENT_NOT_FOUND', `cannot read agent file ${path} (${code})`, { details: { path: full } })
  // No such file: a near name beside it, else the agent files there; a folder on the way that is missing, a near
  // name for it.
  const dir = dirname(full)
  if (!isFolder(dir)) {
    const fixed = nearFolder(dir)
    const guess = fixed && join(fixed, basename(full))
    const why = isFile(dir) ? `${shown(dir)} is a file, not a folder` : `there is no folder ${shown(dir)}`
    return new TeaError('AGENT_NOT_FOUND', `no agent file ${path}: ${why}`, {
      details: { path: full },
      hint: guess && isFile(guess) ? `did you mean ${shown(guess)}?` : `check the path${examplesHint(cwd)}`,
    })
  }
  // Compared without the extension, which every candidate shares and which would make any name look near.
  const stem = (name: string): string => name.replace(AGENT_FILE, '')
  const names = agentNames(dir)
  const near = closest(stem(basename(full)), names.map(stem), 1).map((n) => shown(join(dir, names.find((f) => stem(f) === n)!)))
  const around = agentFilesIn(dir, shown)
  const hint = near.length
    ? `did you mean ${list(near)}?`
    : around.length
      ? `agent files in ${shown(dir)}: ${list(around)}`
      : `no agent file (*.yaml, *.yml) in ${shown(dir)}${examplesHint(cwd)}`
  return new TeaError('AGENT_NOT_FOUND', `no agent file ${path}`, { details: { path: full }, hint })
}

// --- internal ---

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/**
 * `dir` (missing) with its first missing folder replaced by the nearest name among its siblings (`examples/helo` →
 * `examples/hello`), when that gives a folder; else undefined.
 */
function nearFolder(dir: string): string | undefined {
  let parent = dirname(dir)
  const missing = [basename(dir)]
  while (!isFolder(parent)) {
    if (dirname(parent) === parent) return undefined
    missing.unshift(basename(parent))
    parent = dirname(parent)
  }
  let folders: string[]
  try {
    folders = readdirSync(parent, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
  } catch {
    return undefined
  }
  const [first, ...rest] = missing
  const name = closest(first!, folders, 1)[0]
  const fixed = name === undefined ? undefined : join(parent, name, ...rest)
  return fixed && isFolder(fixed) ? fixed : undefined
}

function agentNames(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && AGENT_FILE.test(e.name))
      .map((e) => e.name)
      .sort()
  } catch {
    return []
  }
}

/** The agent files in `dir`, and in its folders one level down (`examples/hello/agent.yaml`), as `shown` writes them. */
function agentFilesIn(dir: string, shown: (file: string) => string): string[] {
  const files = agentNames(dir).map((n) => shown(join(dir, n)))
  if (files.length) return files
  try {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory() && !e.name.startsWith('.')) files.push(...agentNames(join(dir, e.name)).map((n) => shown(join(dir, e.name, n))))
      if (files.length > LISTED) break
    }
  } catch {}
  return files
}

function list(files: string[]): string {
  return files.length > LISTED ? `${files.slice(0, LISTED).join(', ')}, …` : files.join(', ')
}

/** Points at the examples when the working directory has them (a clone of tea). */
function examplesHint(cwd: string): string {
  const hello = join(cwd, 'examples', 'hello', 'agent.yaml')
  try {
    if (statSync(hello).isFile()) return `; the examples are one folder each, e.g. ${relative(cwd, hello)}`
  } catch {}
  return ''
}
