/**
 * Template engine micro-benchmark: median nanoseconds per render for the shapes the engine renders most.
 * Run: npx tsx bench/template.bench.ts [--fuzz]   (--fuzz also runs 100,000 generated malformed templates)
 */

import { compileTemplate } from '../src/template/index.ts'

interface Case {
  name: string
  source: string
}

const CASES: Case[] = [
  { name: 'native {{ state.i }}', source: '{{ state.i }}' },
  { name: 'text, 3 parts', source: 'Hello {{ state.name }}, welcome.' },
  { name: 'text, 4 parts', source: 'Item {{ state.i }} of {{ state.name }}' },
  { name: 'static text', source: 'no template here' },
  { name: 'for over 10 items', source: '{% for x in state.xs %}{{ loop.index }}={{ x }} {% endfor %}' },
  { name: 'filter chain', source: "{{ state.name | upper | replace('A', 'a') | default('x') }}" },
]

function medianNsPerRender(source: string, rounds = 15, perRound = 200_000): number {
  const t = compileTemplate(source, { node: 'bench', field: 'with.prompt' })
  const scopes = Array.from({ length: 64 }, (_, i) => ({
    state: { i, name: `Name${i}`, xs: Array.from({ length: 10 }, (_, j) => j) },
  }))
  let sink = 0
  const samples: number[] = []
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint()
    for (let k = 0; k < perRound; k++) {
      const v = t.render(scopes[k & 63]!)
      sink += typeof v === 'string' ? v.length : 1
    }
    samples.push(Number(process.hrtime.bigint() - start) / perRound)
  }
  if (sink === -1) console.log(sink)
  samples.sort((a, b) => a - b)
  return samples[samples.length >> 1]!
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${process.arch}`)
  for (const c of CASES) {
    const perRound = c.name.startsWith('for') ? 20_000 : 200_000
    console.log(
      `${c.name.padEnd(24)} ${medianNsPerRender(c.source, 15, perRound).toFixed(1).padStart(8)} ns/render   ${JSON.stringify(c.source)}`,
    )
  }
  if (process.argv.includes('--fuzz')) {
    const { fuzzTemplates } = await import('../test/template/fuzz.ts')
    const start = Date.now()
    const report = fuzzTemplates(100_000, 1)
    console.log(`fuzz: ${JSON.stringify(report)} in ${Date.now() - start} ms`)
  }
}

await main()
