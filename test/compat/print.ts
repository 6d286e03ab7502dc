// Prints the TEA corpus tables for docs/tea-compat.md: `npx tsx test/compat/print.ts [--list] [--features]
// [--only=<part of a path>]` (--list adds one line per file: outcome, code, file, message; --features prints every
// TEA key and action with its status in tea, from src/agent/tea-dialect.ts; --only counts only the files whose path
// contains it).
import { teaActions, teaKeys, type TeaFeature } from '../../src/agent/tea-dialect.ts'
import { countCorpus, summarize, type CountMode } from './corpus.ts'

if (process.argv.includes('--features')) {
  const rows = (table: Readonly<Record<string, TeaFeature>>) =>
    Object.entries(table).map(([k, f]) => `| \`${k}\` | ${f.status} | ${f.note.replaceAll('|', '\\|')} |`)
  console.log(['| TEA key | in tea | note |', '|---|---|---|', ...rows(teaKeys())].join('\n'))
  console.log(['', '| TEA action | in tea | note |', '|---|---|---|', ...rows(teaActions())].join('\n'))
  process.exit(0)
}

const TITLES: Record<CountMode, string> = {
  'as-written': 'As written',
  'python-default': 'With settings.run_language: python added to files with Python run: code',
  stubbed: 'Stubbed (run: bodies → return {}, language: removed)',
}
for (const mode of ['as-written', 'python-default', 'stubbed'] as const) {
  const t0 = Date.now()
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length)
  const results = await countCorpus({ mode, ...(only && { only: (file: string) => file.includes(only) }) })
  console.log(`\n### ${TITLES[mode]}\n\n${summarize(results).table}`)
  console.log(`\n${results.length} files in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
  if (process.argv.includes('--list'))
    for (const r of results) console.log(`${r.outcome}\t${r.code ?? ''}\t${r.file}\t${(r.message ?? '').split('\n')[0]}`)
}
