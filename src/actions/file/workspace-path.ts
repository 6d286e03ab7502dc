/**
 * Confinement of `file.*` actions to the agent's workspace (SPEC §3.4). A path is accepted only when it is
 * relative and, after resolving every symlink on the way (including dangling ones, whose target a write or an
 * append would follow), it still lies inside the workspace's own real path.
 *
 * This guards against an agent's templates or a model's tool call naming a file elsewhere; it is not a defence
 * against another process swapping directories for symlinks between the check and the use.
 */

import { lstat, readlink, realpath } from 'node:fs/promises'
import path from 'node:path'
import { TeaError } from '../../core/errors.ts'
import { fileError } from './file-error.ts'

export interface WorkspacePath {
  /** The absolute path to operate on (symlinks resolved). */
  real: string
  /** The path relative to the workspace, `/`-separated, for results and messages. */
  relative: string
}

/** Linux gives up after 40 links; so do we, instead of looping forever on a symlink cycle. */
const MAX_LINKS = 40

export async function resolveInWorkspace(action: string, workspace: string, given: string): Promise<WorkspacePath> {
  const outside = (why: string): TeaError =>
    new TeaError(
      'PATH_OUTSIDE_WORKSPACE',
      `${action}: path '${given}' ${why}; file actions may only use paths inside the workspace ${workspace}`,
      {
        details: { path: given, workspace },
        hint: 'use a path relative to the workspace, without leading "..", or change settings.workspace',
      },
    )
  if (!path.isAbsolute(workspace)) {
    throw new TeaError('FILE_ERROR', `${action}: the workspace must be an absolute path, got '${workspace}'`)
  }
  if (given.includes('\0')) throw outside('contains a NUL byte')
  if (path.isAbsolute(given)) throw outside('is absolute')
  const lexical = path.resolve(workspace, given)
  if (!isInside(path.resolve(workspace), lexical)) throw outside('leads out of the workspace')
  let realWorkspace: string
  let real: string
  try {
    realWorkspace = await realResolve(path.resolve(workspace), { links: 0 })
    real = await realResolve(lexical, { links: 0 })
  } catch (e) {
    throw fileError(action, given, workspace, e)
  }
  if (!isInside(realWorkspace, real)) throw outside(`leads through a symlink to ${real}`)
  const relative = path.relative(realWorkspace, real).split(path.sep).join('/') || '.'
  return { real, relative }
}

function isInside(root: string, p: string): boolean {
  const rel = path.relative(root, p)
  // `..foo` is a legal name inside the root; only a whole `..` segment leaves it.
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel))
}

/**
 * `fs.realpath` that also works for paths that do not exist yet: the longest existing prefix is resolved and the
 * rest appended. A dangling symlink is followed textually, because creating or appending through it would land
 * at its target.
 */
async function realResolve(p: string, budget: { links: number }): Promise<string> {
  try {
    return await realpath(p)
  } catch (e) {
    if (!isMissing(e)) throw e
  }
  const parent = path.dirname(p)
  if (parent === p) return p
  const link = await lstat(p).then(
    (s) => (s.isSymbolicLink() ? readlink(p) : undefined),
    () => undefined,
  )
  if (link !== undefined) {
    if (++budget.links > MAX_LINKS) throw Object.assign(new Error(`too many symbolic links at ${p}`), { code: 'ELOOP' })
    return realResolve(path.resolve(parent, link), budget)
  }
  return path.join(await realResolve(parent, budget), path.basename(p))
}

function isMissing(e: unknown): boolean {
  const code = (e as { code?: unknown }).code
  return code === 'ENOENT' || code === 'ENOTDIR'
}
