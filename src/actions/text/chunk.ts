/**
 * `text.chunk`: splits texts into pieces of about `size` characters or tokens, each starting `size − overlap` after
 * the last, so a folder of notes can be embedded a passage at a time. Tokens are whitespace-separated words (what a
 * reader counts; a model's tokenizer gives ~1.3 of its tokens per English word). A cut prefers the last paragraph
 * break, then line break, then sentence end, then space in the second half of the piece, so passages end where the
 * text does. TEA has no splitting action of its own (its vector.index_files cuts by line, paragraph or document).
 */

import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { defineAction } from '../types.ts'

const MAX_TEXTS = 10_000
const MAX_CHUNKS = 100_000

export interface ChunkOptions {
  size: number
  overlap: number
  unit: 'chars' | 'tokens'
}

/** The pieces of one text, with the character offset each starts at. */
export function chunkText(text: string, o: ChunkOptions): Array<{ text: string; start: number }> {
  if (o.unit === 'tokens') return chunkTokens(text, o)
  const out: Array<{ text: string; start: number }> = []
  let start = 0
  while (start < text.length) {
    let end = Math.min(text.length, start + o.size)
    if (end < text.length) end = breakBefore(text, start, end)
    const piece = text.slice(start, end).trim()
    if (piece) out.push({ text: piece, start })
    if (end >= text.length) break
    start = Math.max(start + 1, end - o.overlap)
    // The overlap starts at a word: forward to the next space's end, unless that leaves no overlap.
    const space = text.slice(start, end).search(/\s\S/)
    if (start > 0 && /\S/.test(text[start - 1]!) && space >= 0) start += space + 1
  }
  return out
}

/** Where to cut in (start, end]: the last break of the best kind in the second half of the piece, else `end`. */
function breakBefore(text: string, start: number, end: number): number {
  const half = start + Math.floor((end - start) / 2)
  for (const mark of ['\n\n', '\n', '. ', ' ']) {
    const at = text.lastIndexOf(mark, end - mark.length)
    if (at >= half) return at + mark.length
  }
  return end
}

function chunkTokens(text: string, o: ChunkOptions): Array<{ text: string; start: number }> {
  const words = [...text.matchAll(/\S+/g)]
  const out: Array<{ text: string; start: number }> = []
  for (let i = 0; i < words.length; i += o.size - o.overlap) {
    const first = words[i]!
    const last = words[Math.min(words.length, i + o.size) - 1]!
    out.push({ text: text.slice(first.index, last.index + last[0].length), start: first.index })
    if (i + o.size >= words.length) break
  }
  return out
}

const params = v.pipe(
  v.object({
    text: v.pipe(v.union([v.string(), v.array(v.string())]), v.description('A text or a list of texts.')),
    size: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000), v.description('Characters (or tokens) a piece.')),
      1000,
    ),
    overlap: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(0), v.description('Characters (or tokens) shared with the piece before.')),
      100,
    ),
    unit: v.optional(v.pipe(v.picklist(['chars', 'tokens']), v.description('What size and overlap count: characters or words.')), 'chars'),
    metadata: v.optional(
      v.pipe(
        v.union([v.array(v.record(v.string(), v.unknown())), v.record(v.string(), v.unknown())]),
        v.description('Metadata for every piece, or one mapping per text; each piece adds `chunk` (its place) and `start`.'),
      ),
    ),
  }),
  v.check((p) => p.overlap < p.size, 'overlap must be smaller than size'),
)

export const textChunk = defineAction({
  name: 'text.chunk',
  description:
    "Splits a text (or a list) into overlapping pieces for embedding: returns {chunks, metadata, count}, metadata one mapping per piece (the text's own, plus chunk and start).",
  params,
  async run(p) {
    const texts = Array.isArray(p.text) ? p.text : [p.text]
    if (texts.length > MAX_TEXTS) throw new TeaError('DOCUMENT_INVALID', `${texts.length} texts to chunk; at most ${MAX_TEXTS}`)
    if (Array.isArray(p.metadata) && p.metadata.length !== texts.length) {
      throw new TeaError('DOCUMENT_INVALID', `${p.metadata.length} metadata mappings for ${texts.length} texts`, {
        hint: 'give one mapping per text, or one for all',
      })
    }
    const chunks: string[] = []
    const metadata: Array<Record<string, unknown>> = []
    texts.forEach((text, i) => {
      const own = (Array.isArray(p.metadata) ? p.metadata[i] : p.metadata) ?? {}
      chunkText(text, p).forEach((c, n) => {
        if (chunks.length === MAX_CHUNKS)
          throw new TeaError('DOCUMENT_INVALID', `the texts make more than ${MAX_CHUNKS} pieces`, { hint: 'use a larger size' })
        chunks.push(c.text)
        metadata.push({ ...own, chunk: n, start: c.start })
      })
    })
    return { chunks, metadata, count: chunks.length }
  },
})
