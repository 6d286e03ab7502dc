// Prints the TEA corpus tables for docs/tea-compat.md: `npx tsx test/compat/print.ts [--list]` (--list adds one
// line per file: outcome, code, file, message).
import { countCorpus, summarize } from './corpus.ts'

for (const stubbed of [false, true]) {
  const t0 = Date.now()
  const results = await countCorpus({ stubbed })
  console.log(`\n### ${stubbed ? 'Stubbed (run: bodies → return {}, language: removed)' : 'As written'}\n\n${summarize(results).table}`)
  console.log(`\n${results.length} files in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
  if (process.argv.includes('--list')) for (const r of results) console.log(`${r.outcome}\t${r.code ?? ''}\t${r.file}\t${(r.message ?? '').split('\n')[0]}`)
}
