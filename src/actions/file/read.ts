import { open } from 'node:fs/promises'
import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { defineAction } from '../types.ts'
import { fileError } from './file-error.ts'
import { resolveInWorkspace } from './workspace-path.ts'

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
    const target = await resolveInWorkspace('file.read', workspace, p.path)
    try {
      // Stat through the open handle, so the size we check belongs to the file we read.
      const handle = await open(target.real, 'r')
      try {
        const stat = await handle.stat()
        if (!stat.isFile()) throw fileError('file.read', p.path, workspace, { code: stat.isDirectory() ? 'EISDIR' : 'ENOTREG' })
        if (stat.size > p.max_bytes) {
          throw new TeaError(
            'FILE_ERROR',
            `file.read: '${p.path}' is ${stat.size} bytes, more than max_bytes ${p.max_bytes} (workspace ${workspace})`,
            { details: { path: p.path, workspace, bytes: stat.size, max_bytes: p.max_bytes } },
          )
        }
        const data = await handle.readFile()
        return { content: data.toString(p.encoding), bytes: data.length }
      } finally {
        await handle.close()
      }
    } catch (e) {
      throw fileError('file.read', p.path, workspace, e)
    }
  },
})
