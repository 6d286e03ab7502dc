/**
 * The lexical half of `file.*` confinement (SPEC §3.4): a path the agent gives must be relative, free of NUL bytes,
 * and must not climb out of the workspace with `..`. What is left is a list of plain names, which `beneath.ts`
 * opens one at a time from a descriptor of the workspace (symlinks are followed there, by hand, and only while
 * they stay inside).
 */

import path from 'node:path'
import { TeaError } from '../../core/errors.ts'

/**
 * The path's names below the workspace, `.` and `..` already applied as text (so `a/../b.txt` is `b.txt`, as the
 * agent wrote it, whatever `a` is); `[]` for the workspace itself.
 */
export function workspaceNames(action: string, workspace: string, given: string): string[] {
  if (given.includes('\0')) throw outsideWorkspace(action, workspace, given, 'contains a NUL byte')
  if (path.isAbsolute(given)) throw outsideWorkspace(action, workspace, given, 'is absolute')
  const root = path.resolve(workspace)
  const lexical = path.resolve(root, given)
  if (!isInside(root, lexical)) throw outsideWorkspace(action, workspace, given, 'leads out of the workspace')
  return namesBelow(root, lexical)
}

/** The names of `p` below `root`; `p` must be inside `root` (see `isInside`). */
export function namesBelow(root: string, p: string): string[] {
  const rel = path.relative(root, p)
  return rel === '' ? [] : rel.split(path.sep)
}

export function isInside(root: string, p: string): boolean {
  const rel = path.relative(root, p)
  // `..foo` is a legal name inside the root; only a whole `..` segment leaves it.
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel))
}

export function outsideWorkspace(
  action: string,
  workspace: string,
  given: string,
  why: string,
  extra: { details?: Record<string, unknown>; hint?: string } = {},
): TeaError {
  return new TeaError(
    'PATH_OUTSIDE_WORKSPACE',
    `${action}: path '${given}' ${why}; file actions may only use paths inside the workspace ${workspace}`,
    {
      details: { path: given, workspace, ...extra.details },
      hint: extra.hint ?? 'use a path relative to the workspace, without leading "..", or change settings.workspace',
    },
  )
}
