import { closeSync } from 'node:fs'
import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { openRegularFile } from '../../core/regular-file.ts'
import { defineAction } from '../types.ts'
import { fileError } from './file-error.ts'
import { errnoError, inFolder, locateInWorkspace } from './beneath.ts'
import { readAll } from './fd-io.ts'

const DEFAULT_MAX_BYTES = 10 * 1024 * 1024

const params = v.object({
  path: v.pipe(v.string(), v.description('File path relative to the workspace.')),
  encoding: v.optional(
    v.pipe(v.picklist(['utf8', 'base64']), v.description('How to return the content: text, or base64 for binary files.')),
    'utf8',
  ),
  max_bytes: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.description('Refuse files larger than this many bytes.')),
    DEFAULT_MAX_BYTES,
  ),
})

export const fileRead = defineAction({
  name: 'file.read',
  description: 'Reads a file inside the agent workspace and returns {content, bytes}, as UTF-8 text or base64.',
  params,
  async run(p, ctx) {
    const workspace = ctx.settings.workspace
    try {
      return await locateInWorkspace('file.read', workspace, p.path, {}, async ({ dir, name }, ws) => {
        if (name === undefined) throw errnoError('EISDIR', 'the workspace itself')
        // A symlink is refused with ELOOP and followed by the walk, not by the kernel; a FIFO is refused without
        // waiting for a writer; the stat is the descriptor's, so what is checked is the file that is read.
        const { fd, stat } = openRegularFile(inFolder(dir, name))
        try {
          ws.verify(fd, p.path)
          ws.refuseHardLink(stat.nlink, p.path)
          if (stat.size > p.max_bytes) {
            throw new TeaError(
              'FILE_ERROR',
              `file.read: '${p.path}' is ${stat.size} bytes, more than max_bytes ${p.max_bytes} (workspace ${workspace})`,
              { details: { path: p.path, workspace, bytes: stat.size, max_bytes: p.max_bytes } },
            )
          }
          const data = await readAll(fd)
          return { content: data.toString(p.encoding), bytes: data.length }
        } finally {
          closeSync(fd)
        }
      })
    } catch (e) {
      throw fileError('file.read', p.path, workspace, e)
    }
  },
})
