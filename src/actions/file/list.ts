import { closeSync, fstatSync, lstatSync, openSync, readdirSync, type Stats } from 'node:fs'
import path from 'node:path'
import * as v from 'valibot'
import { isTeaError } from '../../core/errors.ts'
import { defineAction } from '../types.ts'
import { descriptorPath, errnoError, FOLDER_FLAGS, inFolder, locateInWorkspace, type UseSpot, type Workspace } from './beneath.ts'
import { fileError, fileErrorReason } from './file-error.ts'
import { globToRegExp } from './glob.ts'

const params = v.object({
  path: v.optional(v.pipe(v.string(), v.description('Directory relative to the workspace.')), '.'),
  pattern: v.optional(v.pipe(v.string(), v.description('Only names matching this glob (`*`, `?`, `[a-z]`), e.g. `*.md`.'))),
})

export interface FileEntry {
  name: string
  /** `unknown` for an entry that cannot be resolved (a symlink loop, a dangling symlink); `error` says why. */
  type: 'file' | 'dir' | 'unknown'
  /** Bytes for a file, 0 for a directory or an unknown entry. */
  size: number
  error?: string
}

export const fileList = defineAction({
  name: 'file.list',
  description:
    'Lists one directory of the agent workspace as {files: [{name, type, size, error?}]}, sorted by name, optionally filtered by a glob.',
  params,
  async run(p, ctx) {
    const workspace = ctx.settings.workspace
    const match = p.pattern === undefined ? undefined : globToRegExp(p.pattern)
    try {
      return await locateInWorkspace('file.list', workspace, p.path, {}, async (spot, ws) => {
        // The workspace itself is the walk's own descriptor; any other folder is opened without following a
        // symlink (ENOTDIR on one sends the walk after it) and verified.
        const dir = spot.name === undefined ? spot.dir : openSync(inFolder(spot.dir, spot.name), FOLDER_FLAGS)
        try {
          ws.verify(dir, p.path)
          const files: FileEntry[] = []
          for (const name of readdirSync(descriptorPath(dir))) {
            if (match && !match.test(name)) continue
            const entry = await describe(ws, dir, name, path.posix.join(spot.relative, name))
            if (entry) files.push({ name, ...entry })
          }
          files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
          return { files }
        } finally {
          if (dir !== spot.dir) closeSync(dir)
        }
      })
    } catch (e) {
      throw fileError('file.list', p.path, workspace, e)
    }
  },
})

/**
 * Type and size of one entry. A symlink is followed only while it stays in the workspace: a link pointing out is
 * left out of the listing rather than reveal what lies outside, and so are sockets, FIFOs and devices, and entries
 * gone since readdir. A symlink that cannot be resolved (a loop, a dangling link) is listed with an `error`, so one
 * bad entry does not hide the rest of the folder (D9).
 */
async function describe(ws: Workspace, dir: number, name: string, relative: string): Promise<Omit<FileEntry, 'name'> | undefined> {
  let stat: Stats
  try {
    stat = lstatSync(inFolder(dir, name))
  } catch (e) {
    if ((e as { code?: unknown }).code === 'ENOENT') return undefined
    return { type: 'unknown', size: 0, error: fileErrorReason(e) }
  }
  if (stat.isSymbolicLink()) {
    try {
      stat = await ws.locate(relative, {}, statBeneath)
    } catch (e) {
      if (isTeaError(e, 'PATH_OUTSIDE_WORKSPACE')) return undefined
      const dangling = (e as { code?: unknown }).code === 'ENOENT'
      return { type: 'unknown', size: 0, error: dangling ? 'is a dangling symbolic link: its target does not exist' : fileErrorReason(e) }
    }
  }
  if (stat.isFile()) return { type: 'file', size: stat.size }
  if (stat.isDirectory()) return { type: 'dir', size: 0 }
  return undefined
}

/** The stat of a symlink's final target, for `Workspace.locate` (which follows the links on the way). */
const statBeneath: UseSpot<Stats> = async ({ dir, name, relative }, ws) => {
  ws.verify(dir, relative)
  if (name === undefined) return fstatSync(dir)
  const stat = lstatSync(inFolder(dir, name))
  if (stat.isSymbolicLink()) throw errnoError('ELOOP', 'a symlink: the walk follows it')
  return stat
}
