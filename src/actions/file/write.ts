import { randomBytes } from 'node:crypto'
import { closeSync, constants, fstatSync, lstatSync, openSync, renameSync, rmSync, type Stats } from 'node:fs'
import * as v from 'valibot'
import { defineAction } from '../types.ts'
import { errnoError, inFolder, locateInWorkspace, type Workspace } from './beneath.ts'
import { flushToDisk, writeAll } from './fd-io.ts'
import { fileError } from './file-error.ts'

const params = v.object({
  path: v.pipe(v.string(), v.description('File path relative to the workspace.')),
  content: v.pipe(v.unknown(), v.description('What to write: a string as is, any other value as pretty-printed JSON.')),
  encoding: v.optional(
    v.pipe(v.picklist(['utf8', 'base64']), v.description('How a string content is encoded: text, or base64 for binary.')),
    'utf8',
  ),
  append: v.optional(v.pipe(v.boolean(), v.description('Append to the file instead of replacing it.')), false),
  mkdir: v.optional(v.pipe(v.boolean(), v.description('Create missing parent directories.')), true),
})

export const fileWrite = defineAction({
  name: 'file.write',
  description: 'Writes (atomically) or appends content to a file inside the agent workspace and returns {path, bytes}.',
  params,
  async run(p, ctx) {
    const workspace = ctx.settings.workspace
    const data =
      typeof p.content === 'string'
        ? Buffer.from(p.content, p.encoding)
        : Buffer.from(JSON.stringify(p.content ?? null, null, 2) + '\n', 'utf8')
    try {
      const relative = await locateInWorkspace('file.write', workspace, p.path, { mkdir: p.mkdir }, async (spot, ws) => {
        if (spot.name === undefined) throw errnoError('EISDIR', 'the workspace itself')
        if (p.append) await appendTo(spot.dir, spot.name, data, ws, p.path)
        else await replace(spot.dir, spot.name, data, ws, p.path)
        return spot.relative
      })
      return { path: relative, bytes: data.length }
    } catch (e) {
      throw fileError('file.write', p.path, workspace, e)
    }
  },
})

// Never through a symlink (the walk follows those), never waiting on a FIFO, never taking a terminal.
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NOCTTY

/**
 * Appends to `name` in `dir`, creating it if missing. Nothing is written before the opened file is verified: inside
 * the workspace by its kernel path, a regular file, and its only name (an append through a hard link would change
 * a file outside, D5). A file created in a folder that was moved out meanwhile is removed again, empty.
 */
async function appendTo(dir: number, name: string, data: Buffer, ws: Workspace, given: string): Promise<void> {
  const file = inFolder(dir, name)
  let created = false
  let fd: number | undefined
  for (let attempt = 0; fd === undefined; attempt++) {
    try {
      fd = openSync(file, APPEND_FLAGS)
    } catch (e) {
      // Missing: create it, exclusively (O_EXCL also refuses a symlink there). EEXIST: someone else just did; look
      // again. ELOOP (a symlink) goes back to the walk.
      if ((e as { code?: unknown }).code !== 'ENOENT' || attempt > 2) throw e
      ws.verify(dir, given)
      try {
        fd = openSync(file, CREATE_FLAGS | constants.O_APPEND, 0o666)
        created = true
      } catch (err) {
        if ((err as { code?: unknown }).code !== 'EEXIST') throw err
      }
    }
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw errnoError('ENOTREG', 'not a regular file')
    try {
      ws.verify(fd, given)
    } catch (e) {
      if (created) rmSync(file, { force: true })
      throw e
    }
    ws.refuseHardLink(stat.nlink, given)
    await writeAll(fd, data)
  } finally {
    closeSync(fd)
  }
}

/**
 * Boards lose power mid-write: a reader must see the old file or the new one, never half of one. So the bytes go
 * to a temp file in the target's folder, are flushed to the card, and the temp file is renamed over the target
 * (atomic on POSIX). The rename replaces the name, so a hard link there is broken, not written through; a symlink
 * there is followed by the walk (refused when it leads out) rather than replaced.
 *
 * Both the temp file and the rename go through the folder's descriptor (`/proc/self/fd/N/…`), so they happen in the
 * folder the walk opened, whatever its path is by then. The temp file's kernel path is verified before its bytes
 * are written and again just before the rename, which proves that folder inside the workspace at that moment. What
 * remains is the folder itself being moved out of the workspace between that check and the rename: the new file
 * then lands in that same folder, next to the workspace files that were moved out with it. It cannot land in any
 * other folder, and it replaces a name rather than writing into an existing file, so no file that was outside the
 * workspace is ever written.
 */
async function replace(dir: number, name: string, data: Buffer, ws: Workspace, given: string): Promise<void> {
  let existing: Stats | undefined
  try {
    existing = lstatSync(inFolder(dir, name))
  } catch (e) {
    if ((e as { code?: unknown }).code !== 'ENOENT') throw e
  }
  if (existing?.isSymbolicLink()) throw errnoError('ELOOP', 'a symlink: the walk follows it')
  if (existing?.isDirectory()) throw errnoError('EISDIR', 'a folder')
  const temp = inFolder(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`)
  try {
    const fd = openSync(temp, CREATE_FLAGS, 0o666)
    try {
      ws.verify(fd, given) // no byte into a folder that has left the workspace
      await writeAll(fd, data)
      await flushToDisk(fd)
      ws.verify(fd, given) // and again as late as possible before the rename
    } finally {
      closeSync(fd)
    }
    renameSync(temp, inFolder(dir, name))
  } catch (e) {
    rmSync(temp, { force: true })
    throw e
  }
}
