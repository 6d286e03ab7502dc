// `npm run soak`: the full soak (issue 9) — 100 SIGKILL trials for a linear run and for a parallel plan, 20
// double-resume races, 100,000 malformed inputs, 100,000 hostile JSON values into every entry point — printing the figures for docs/reliability.md. Exits 1 on any
// failure, listing each with its seed. `npm run soak -- --seed N` reproduces a run. Builds the bundle first.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { failures, report, soak } from './soak.ts'

const root = join(import.meta.dirname, '../..')
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name)
  return i > 0 ? Number(process.argv[i + 1]) : fallback
}
const built = spawnSync(process.execPath, [join(root, 'build.mjs'), '--target', 'linux-x64', '--quiet'], { stdio: 'inherit' })
if (built.status !== 0) process.exit(1)
const counts = {
  linearKills: arg('--linear', 100),
  planKills: arg('--plan', 100),
  races: arg('--races', 20),
  inputs: arg('--inputs', 100_000),
  fuzz: arg('--fuzz', 100_000),
  seed: arg('--seed', Date.now() % 1_000_000),
}
console.error(`soak: seed ${counts.seed}`)
const figures = await soak(counts, (line) => console.error(`  ${line}`))
console.log(report(figures, counts))
const failed = failures(figures)
for (const f of failed) console.log(`FAILED ${f}`)
process.exit(failed.length ? 1 : 0)
