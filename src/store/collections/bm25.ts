/**
 * Okapi BM25 over the inverted index (k1 1.2, b 0.75, idf ln(1 + (N − df + 0.5)/(df + 0.5)), the Lucene form, never
 * negative). Words are runs of letters, digits and `_`, lower-cased; a word longer than MAX_TERM characters is cut
 * there, so one posting key stays small.
 */

const K1 = 1.2
const B = 0.75
const MAX_TERM = 64

/** The words of a text, in order. */
export function tokenize(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []
  return words.map((w) => (w.length > MAX_TERM ? w.slice(0, MAX_TERM) : w))
}

/** Each distinct word of a text with its count. */
export function termCounts(words: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1)
  return counts
}

/** One term's contribution to a document's score. */
export function bm25Term(tf: number, docLength: number, df: number, docs: number, avgLength: number): number {
  const idf = Math.log(1 + (docs - df + 0.5) / (df + 0.5))
  return (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * docLength) / (avgLength || 1)))
}
