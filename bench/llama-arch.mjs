#!/usr/bin/env node
// llama.cpp as the executables carry it (issue 30 item 7, for information): for each target with the llama
// feature, the target's own Node (the arm64 one under qemu) loads the build's llama/ folder (node-llama-cpp's
// JavaScript and the arch's addon, dist/<target>/llama/, made by `node build.mjs --target <name>`) and the tiny
// random-weight model scripts/tiny-gguf.mjs writes, and generates: the addon's load (getLlama), the model's load,
// the context's creation, and tokens per second over a fixed number of tokens, one thread. qemu's figures say how
// far emulation stretches them, nothing about a board's speed.
//
//   node bench/llama-arch.mjs [--runs 3] [--tokens 48] [--targets linux-x64,linux-arm64]
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildCache } from '../scripts/fetch-runtimes.mjs'
import { runnerFor } from '../scripts/build/qemu.mjs'
import { listTargets, loadTarget } from '../scripts/build/targets.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback)
const runs = Number(opt('--runs', 3))
const tokens = Number(opt('--tokens', 48))
const names = opt('--targets', '') ? opt('--targets').split(',') : listTargets(root).filter((n) => loadTarget(root, n).features.llama)

const PROBE = `
const t0 = performance.now()
const m = require(process.argv[2] + '/llama.cjs')
const t1 = performance.now()
;(async () => {
  const llama = await m.getLlama({ build: 'never', gpu: false, logLevel: 'error', logger: () => {} })
  const t2 = performance.now()
  const model = await llama.loadModel({ modelPath: process.argv[3] })
  const t3 = performance.now()
  const context = await model.createContext({ contextSize: 512, threads: 1 })
  const sequence = context.getSequence()
  const t4 = performance.now()
  const n = Number(process.argv[4])
  const prompt = model.tokenize('hello')
  let count = 0
  const g0 = performance.now()
  for await (const token of sequence.evaluate(prompt, { temperature: 0 })) {
    if (++count >= n) break
  }
  const g1 = performance.now()
  console.log(JSON.stringify({ requireMs: t1 - t0, addonMs: t2 - t1, modelMs: t3 - t2, contextMs: t4 - t3, tokens: count, tokensPerS: count / ((g1 - g0) / 1000) }))
  await llama.dispose()
})()
`

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

const dir = mkdtempSync(join(tmpdir(), 'tea-llama-arch-'))
try {
  const model = join(dir, 'tiny.gguf')
  spawnSync(process.execPath, [join(root, 'scripts', 'tiny-gguf.mjs'), model], { stdio: 'inherit' })
  const probe = join(dir, 'probe.cjs')
  writeFileSync(probe, PROBE)
  const load = loadavg()
  console.log(
    `#### llama.cpp per target (tiny model, ${tokens} tokens, 1 thread; ${runs} runs, medians; load average ${load.map((l) => l.toFixed(2)).join(' ')})\n`,
  )
  console.log('| target | how | require llama.cjs ms | addon (getLlama) ms | model load ms | context ms | tokens/s |')
  console.log('|---|---|---|---|---|---|---|')
  for (const name of names) {
    const target = loadTarget(root, name)
    const folder = join(root, 'dist', name, 'llama')
    if (!existsSync(folder)) throw new Error(`${folder} is missing: node build.mjs --target ${name}`)
    const node = join(buildCache(), 'node', `node-linux-${target.arch === 'arm' ? 'armv7l' : target.arch}-${target.node}`, 'bin', 'node')
    const [cmd, ...prefix] = [...runnerFor(target.arch), node]
    const samples = []
    for (let i = 0; i < runs; i++) {
      const r = spawnSync(cmd, [...prefix, probe, folder, model, String(tokens)], { encoding: 'utf8', timeout: 600_000 })
      if (r.status !== 0) throw new Error(`${name}: ${r.stderr || r.stdout}`)
      samples.push(JSON.parse(r.stdout.trim().split('\n').at(-1)))
    }
    const m = (k) => median(samples.map((s) => s[k])).toFixed(k === 'tokensPerS' ? 1 : 0)
    const how = runnerFor(target.arch).length ? `qemu (${runnerFor(target.arch)[0]})` : 'native'
    console.log(`| ${name} | ${how} | ${m('requireMs')} | ${m('addonMs')} | ${m('modelMs')} | ${m('contextMs')} | ${m('tokensPerS')} |`)
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
