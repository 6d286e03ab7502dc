import { randomBytes } from 'node:crypto'
import { appendFile, mkdir, open, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import * as v from 'valibot'
import { defineAction } from '../types.ts'
import { fileError } from './file-error.ts'
import { resolveInWorkspace } from './workspace-path.ts'

const params = v.object({
  path: v.pipe(v.string(), v.description('File path relative to the workspace.')),
  content: v.pipe(
    v.unknown(),
    v.description('What to write: a string as is, any other value as pretty-printed JSON.'),
  ),
  encoding: v.optional(
    v.pipe(v.picklist(['utf8', 'base64']), v.description('How a string content is encoded: text, or base64 for binary.')),
    'utf8',
  ),
  append: v.optional(v.pipe(v.boolean(), v.description('Append to the file instead of replacing it.')), false),
  mkdir: v.optional(v.pipe(v.boolean(), v.description('Create missing parent directories.')), true),
})

export const fileWrite = defineAction({
  name: 'file.write',
  description:
    'Writes (atomically) or appends content to a file inside the agent workspace and returns {path, bytes}.',
  params,
  async run(p, ctx) {
    const workspace = ctx.settings.workspace
    const target = await resolveInWorkspace('file.write', workspace, p.path)
    const data =
      typeof p.content === 'string'
        ? Buffer.from(p.content, p.encoding)
        : Buffer.from(JSON.stringify(p.content ?? null, null, 2) + '\n', 'utf8')
    try {
      if (p.mkdir) await mkdir(path.dirname(target.real), { recursive: true })
      if (p.append) await appendFile(target.real, data)
      else await writeAtomically(target.real, data)
    } catch (e) {
      throw fileError('file.write', p.path, workspace, e)
    }
    return { path: target.relative, bytes: data.length }
  },
})

/**
 * Boards lose power mid-write: a reader must see the old file or the new one, never half of one. So the bytes go
 * to a sibling temp file, are flushed to the card, and the temp file is renamed over the target (atomic on POSIX).
 * Renaming also replaces a symlink at the target instead of writing through it.
 */
async function writeAtomically(file: string, data: Buffer): Promise<void> {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`)
  try {
    const handle = await open(temp, 'wx')
    try {
      await handle.writeFile(data)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp, file)
  } catch (e) {
    await rm(temp, { force: true })
    throw e
  }
}
