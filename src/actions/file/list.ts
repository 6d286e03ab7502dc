import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import * as v from 'valibot'
import { isTeaError } from '../../core/errors.ts'
import { defineAction } from '../types.ts'
import { fileError } from './file-error.ts'
import { globToRegExp } from './glob.ts'
import { resolveInWorkspace } from './workspace-path.ts'

const params = v.object({
  path: v.optional(v.pipe(v.string(), v.description('Directory relative to the workspace.')), '.'),
  pattern: v.optional(
    v.pipe(v.string(), v.description('Only names matching this glob (`*`, `?`, `[a-z]`), e.g. `*.md`.')),
  ),
})

export interface FileEntry {
  name: string
  type: 'file' | 'dir'
  /** Bytes for a file, 0 for a directory. */
  size: number
}

export const fileList = defineAction({
  name: 'file.list',
  description:
    'Lists one directory of the agent workspace as {files: [{name, type, size}]}, sorted by name, optionally filtered by a glob.',
  params,
  async run(p, ctx) {
    const workspace = ctx.settings.workspace
    const dir = await resolveInWorkspace('file.list', workspace, p.path)
    const match = p.pattern === undefined ? undefined : globToRegExp(p.pattern)
    let names: string[]
    try {
      names = await readdir(dir.real)
    } catch (e) {
      throw fileError('file.list', p.path, workspace, e)
    }
    const files: FileEntry[] = []
    for (const name of names) {
      if (match && !match.test(name)) continue
      const entry = await describe(workspace, path.posix.join(dir.relative, name))
      if (entry) files.push({ name, ...entry })
    }
    files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    return { files }
  },
})

/**
 * Type and size of one entry, following symlinks only while they stay in the workspace: a link pointing out is
 * left out of the listing rather than reveal what lies outside. Sockets, fifos and devices are left out too.
 */
async function describe(workspace: string, relative: string): Promise<Omit<FileEntry, 'name'> | undefined> {
  try {
    const target = await resolveInWorkspace('file.list', workspace, relative)
    const s = await stat(target.real)
    if (s.isFile()) return { type: 'file', size: s.size }
    if (s.isDirectory()) return { type: 'dir', size: 0 }
    return undefined
  } catch (e) {
    // Outside links and entries that vanished or dangle since readdir are skipped; anything else is real trouble.
    if (isTeaError(e, 'PATH_OUTSIDE_WORKSPACE') || (e as { code?: unknown }).code === 'ENOENT') return undefined
    throw fileError('file.list', relative, workspace, e)
  }
}
