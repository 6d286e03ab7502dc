/**
 * TEA's `vector.index_files`: the text files under workspace folders, cut into pieces (`chunk_by` line, paragraph or
 * document as TEA does, or tea's `chunk_size`/`chunk_overlap` through text.chunk), embedded and stored, one file's
 * pieces in one transaction. A piece's id is `<path>#<n>`, so indexing again replaces a file's pieces (and removes
 * those past its new end); unchanged texts are not embedded again (the embedding cache). Files are read through
 * file.list and file.read, so they stay inside the workspace as every file.* path does.
 */

import path from 'node:path'
import * as v from 'valibot'
import { errorMessage } from '../../core/errors.ts'
import { fileList } from '../file/list.ts'
import { fileRead } from '../file/read.ts'
import { globToRegExp } from '../file/glob.ts'
import { chunkText } from '../text/chunk.ts'
import { defineAction, type ActionContext } from '../types.ts'
import { embedParams, embedTexts } from './embed.ts'
import { collectionParam } from './store.ts'

const MAX_FILES = 10_000
const MAX_FILE_BYTES = 4 * 1024 * 1024

const params = v.object({
  paths: v.pipe(v.union([v.string(), v.array(v.string())]), v.description('Files or folders, relative to the workspace.')),
  pattern: v.optional(
    v.pipe(v.string(), v.description('Only file names matching this glob, e.g. `*.md` (`**/` prefixes are ignored).')),
    '*',
  ),
  extensions: v.optional(v.pipe(v.array(v.string()), v.description('Only these endings, e.g. [".md", ".txt"].'))),
  recursive: v.optional(v.pipe(v.boolean(), v.description('Go into subfolders (default true).')), true),
  chunk_by: v.optional(
    v.pipe(v.picklist(['line', 'paragraph', 'document']), v.description("TEA's strategies: one piece a line, a paragraph or a file.")),
    'paragraph',
  ),
  chunk_size: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(100_000),
      v.description('tea: pieces of this many characters instead (text.chunk).'),
    ),
  ),
  chunk_overlap: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.description('tea: characters shared with the piece before (with chunk_size).')),
    100,
  ),
  incremental: v.optional(
    v.pipe(v.boolean(), v.description("TEA's flag: unchanged texts are never embedded again in tea (the embedding cache).")),
  ),
  collection: collectionParam,
  ...embedParams,
})

type Params = v.InferOutput<typeof params>

export const vectorIndexFiles = defineAction({
  name: 'vector.index_files',
  description:
    "TEA's vector.index_files: the text files under workspace folders, cut into pieces, embedded (cached) and stored with {path, chunk} metadata; returns {success, indexed, skipped, errors, collection, files}.",
  params,
  async run(p, ctx) {
    const files = await listFiles(ctx, Array.isArray(p.paths) ? p.paths : [p.paths], p)
    let indexed = 0
    let skipped = 0
    const errors: string[] = []
    for (const file of files) {
      let content: string
      try {
        const read = (await fileRead.run({ path: file, encoding: 'utf8', max_bytes: MAX_FILE_BYTES }, ctx)) as { content: string }
        content = read.content
      } catch (e) {
        errors.push(`${file}: ${errorMessage(e)}`)
        continue
      }
      const pieces = content.includes('\0') ? [] : piecesOf(content, p)
      if (pieces.length === 0) {
        skipped++
        continue
      }
      const { vectors, model } = await embedTexts(ctx, pieces, p)
      const docs = pieces.map((text, n) => ({
        id: `${file}#${n}`,
        text,
        vector: vectors[n]!,
        metadata: { path: file, file, chunk: n, chunk_type: p.chunk_size ? 'chars' : p.chunk_by },
      }))
      await ctx.store.collectionPut(p.collection, docs, model)
      const stale = (await ctx.store.collectionList(p.collection, 1000, { path: file })).filter(
        (d) => Number(d.id.slice(file.length + 1)) >= pieces.length,
      )
      if (stale.length)
        await ctx.store.collectionDelete(
          p.collection,
          stale.map((d) => d.id),
        )
      indexed += pieces.length
    }
    return { success: true, indexed, skipped, errors, collection: p.collection, files: files.length }
  },
})

function piecesOf(content: string, p: Params): string[] {
  if (p.chunk_size)
    return chunkText(content, { size: p.chunk_size, overlap: Math.min(p.chunk_overlap, p.chunk_size - 1), unit: 'chars' }).map(
      (c) => c.text,
    )
  const parts = p.chunk_by === 'line' ? content.split('\n') : p.chunk_by === 'paragraph' ? content.split(/\n\s*\n/) : [content]
  return parts.map((s) => s.trim()).filter(Boolean)
}

/** The files the paths name, sorted, through file.list (folders) so that each stays inside the workspace. */
async function listFiles(ctx: ActionContext, paths: string[], p: Params): Promise<string[]> {
  const match = globToRegExp(p.pattern.replace(/^(\*\*\/)+/, ''))
  const wanted = (name: string) => match.test(name) && (!p.extensions || p.extensions.some((e) => name.endsWith(e)))
  const found: string[] = []
  const walk = async (dir: string, depth: number): Promise<void> => {
    const { files } = (await fileList.run({ path: dir }, ctx)) as { files: Array<{ name: string; type: string }> }
    for (const f of files) {
      if (found.length >= MAX_FILES) return
      const rel = dir === '.' ? f.name : path.posix.join(dir, f.name)
      if (f.type === 'file' && wanted(f.name)) found.push(rel)
      else if (f.type === 'dir' && p.recursive && depth < 16 && !f.name.startsWith('.')) await walk(rel, depth + 1)
    }
  }
  for (const given of paths) {
    const listed = (await Promise.resolve()
      .then(() => fileList.run({ path: path.posix.dirname(given), pattern: path.posix.basename(given) }, ctx))
      .catch(() => undefined)) as { files: Array<{ name: string; type: string }> } | undefined
    const entry = listed?.files[0]
    if (entry?.type === 'file') found.push(path.posix.normalize(given))
    else await walk(given, 0)
  }
  return [...new Set(found)].sort()
}
