/**
 * Which lmdb-js environment options give the fastest *durable* awaited commit (the choice documented in
 * src/store/lmdb-store.ts, ENV_OPTIONS). Raw lmdb-js, no tea code: a 1-key step record (~30 B) put and awaited
 * 500 times per variant, variants interleaved round-robin so they share the machine's noise; medians.
 * Run: npx tsx bench/store-env.bench.ts [--rounds N]
 *
 * This script imports lmdb directly on purpose (it measures the library, not the store); src/ imports it only in
 * src/store/lmdb-store.ts.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'lmdb'

const N = 500
const argRounds = process.argv.indexOf('--rounds')
const ROUNDS = argRounds > 0 ? Number(process.argv[argRounds + 1]) : 5

const VARIANTS: Record<string, { options: Record<string, unknown>; safe: string }> = {
  'lmdb-js default (overlappingSync)': { options: {}, safe: 'yes' },
  'overlappingSync + separateFlushed': { options: { separateFlushed: true }, safe: 'awaits commit only; flush later' },
  'overlappingSync: false': { options: { overlappingSync: false }, safe: 'yes' },
  'overlappingSync: false, noMetaSync (tea)': {
    options: { overlappingSync: false, noMetaSync: true },
    safe: 'consistent; a power cut may undo the last commit',
  },
  'eventTurnBatching: false, txnStartThreshold 1': {
    options: { eventTurnBatching: false, txnStartThreshold: 1, overlappingSync: false, noMetaSync: true },
    safe: 'as tea',
  },
  'noSync (reference only)': { options: { noSync: true }, safe: 'NO: a power cut can corrupt the file' },
}

const samples = new Map<string, number[]>()
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, { options }] of Object.entries(VARIANTS)) {
    const dir = mkdtempSync(join(tmpdir(), 'tea-env-bench-'))
    const env = open({ path: join(dir, 'tea.lmdb'), ...options })
    const db = env.openDB({ name: 'checkpoints', sharedStructuresKey: Symbol.for('tea.structures') })
    for (let i = 0; i < 20; i++) await db.put(['warm', i], { step: i, node: 'count', update: { count: i }, cursor: { next: 'count' } })
    const t = process.hrtime.bigint()
    for (let i = 0; i < N; i++) await db.put(['run', i], { step: i, node: 'count', update: { count: i }, cursor: { next: 'count' } })
    const us = Number(process.hrtime.bigint() - t) / 1e3 / N
    samples.set(name, [...(samples.get(name) ?? []), us])
    await env.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

console.log(
  `node ${process.version} ${process.arch}; ${new Date().toISOString()}; ${ROUNDS} rounds × ${N} awaited puts; load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)
console.log('variant | µs per awaited put, median (min–max) | power-cut safe')
for (const [name, xs] of samples) {
  const s = [...xs].sort((a, b) => a - b)
  console.log(`${name} | ${s[s.length >> 1]!.toFixed(0)} (${s[0]!.toFixed(0)}–${s.at(-1)!.toFixed(0)}) | ${VARIANTS[name]!.safe}`)
}
