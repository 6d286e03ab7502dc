#!/usr/bin/env node
// Bundle and executable sizes per target (SPEC §4 bounds the executable: its stripped Node + ≤ 2.5 MB; the bundle
// has no bar of its own).
//   node bench/size.mjs            bundles only (builds them into bench/.out/size/)
//   node bench/size.mjs --exe      also dist/<target>/tea (built by `npm run sea -- --all`) and its `xz -9` size
// Prints a Markdown table; the per-package breakdown shows where the bytes come from.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildTarget } from '../build.mjs'
import { listTargets, loadTarget } from '../scripts/build/targets.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'bench', '.out', 'size')
const kb = (n) => `${(n / 1024).toFixed(1)} KB`
const mb = (n) => `${(n / 1e6).toFixed(1)} MB`

function groupOf(file) {
  const m = file.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)
  if (m) return m[1]
  const s = file.match(/^src\/([^/]+)/)
  return s ? `src/${s[1]}` : file
}

/** `xz -9` size, cached by the file's hash (compressing 100 MB takes about a minute). */
function xzSize(file) {
  const hash = createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 16)
  const cache = join(out, `xz-${hash}.json`)
  if (existsSync(cache)) return JSON.parse(readFileSync(cache, 'utf8')).size
  const size = Number(execFileSync('sh', ['-c', 'xz -9 -c "$1" | wc -c', 'sh', file], { encoding: 'utf8', maxBuffer: 1 << 20 }).trim())
  writeFileSync(cache, JSON.stringify({ file, size }))
  return size
}

async function main() {
  const withExe = process.argv.includes('--exe')
  mkdirSync(out, { recursive: true })
  const rows = []
  const groups = {}
  for (const name of listTargets(root)) {
    const target = loadTarget(root, name)
    const r = await buildTarget(name, { quiet: true, metafile: true, outfile: join(out, name, 'tea.cjs') })
    const row = { name, node: target.node, bundle: r.size }
    const inputs = Object.values(r.metafile.outputs)[0].inputs
    for (const [f, v] of Object.entries(inputs))
      (groups[name] ??= {})[groupOf(f)] = ((groups[name] ??= {})[groupOf(f)] ?? 0) + v.bytesInOutput
    const exe = join(root, 'dist', name, 'tea')
    if (withExe && existsSync(exe)) {
      row.exe = statSync(exe).size
      row.xz = xzSize(exe)
    }
    rows.push(row)
  }
  const by = Object.fromEntries(rows.map((r) => [r.name, r]))
  console.log('| target | Node | bundle (minified) | executable | xz -9 |')
  console.log('|---|---|---|---|---|')
  for (const r of rows) console.log(`| ${r.name} | ${r.node} | ${kb(r.bundle)} | ${r.exe ? mb(r.exe) : '–'} | ${r.xz ? mb(r.xz) : '–'} |`)
  if (by['linux-arm64'] && by['linux-arm64-core']) {
    const ratio = by['linux-arm64-core'].bundle / by['linux-arm64'].bundle
    console.log(
      `\ncore/full bundle ratio (linux-arm64-core / linux-arm64): ${ratio.toFixed(3)} (${kb(by['linux-arm64'].bundle - by['linux-arm64-core'].bundle)} removed)`,
    )
  }
  const g = groups['linux-x64'] ?? {}
  const deps = Object.entries(g).filter(([k]) => !k.startsWith('src/') && !k.includes(':') && !k.endsWith('.cjs'))
  console.log(
    `\nlinux-x64 by origin (bytes in output): dependencies ${kb(deps.reduce((a, [, v]) => a + v, 0))}, src ${kb(
      Object.entries(g)
        .filter(([k]) => k.startsWith('src/'))
        .reduce((a, [, v]) => a + v, 0),
    )}`,
  )
  for (const [k, v] of Object.entries(g)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 20))
    console.log(`  ${k.padEnd(32)} ${kb(v)}`)
  writeFileSync(join(out, 'size.json'), JSON.stringify({ rows, groups }, null, 2))
}

main().catch((e) => {
  console.error(`size: ${e.stack ?? e.message}`)
  process.exit(1)
})
