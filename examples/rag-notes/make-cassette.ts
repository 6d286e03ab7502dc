/**
 * Writes cassette.jsonl for this example by running it (the built bundle, `--record`) against tea's fake model
 * server: its embeddings are a hashed bag of words (64 numbers: each word of three letters or more, lower-cased,
 * counted in the slot its FNV-1a hash picks), so passages sharing words with the question come out nearest, as a
 * real embedding model's would for this text; the chat reply is one we wrote from the passages retrieved.
 * Run after changing the notes, the agent or the chunking:
 *   node build.mjs --target linux-x64 --quiet && npx tsx examples/rag-notes/make-cassette.ts
 */

import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startFakeModelServer } from '../../test/support/fake-model-server.ts'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '../..')

export function bagOfWords(text: string): number[] {
  const v = new Array<number>(64).fill(0)
  for (const word of text.toLowerCase().match(/[a-z]{3,}/g) ?? []) {
    let h = 0x811c9dc5
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193) >>> 0
    v[h % 64]! += 1
  }
  return v
}

const ANSWER =
  'Clean the irrigation filter every two weeks from May to September and once a month for the rest of the year; Marta keeps the spare key to the pump room (irrigation.md, keys.md).'

const server = await startFakeModelServer({ embed: bagOfWords })
server.script({ content: ANSWER, usage: { prompt_tokens: 180, completion_tokens: 45 } })
const dataDir = mkdtempSync(join(tmpdir(), 'rag-notes-'))
try {
  // Not spawnSync: the fake server answers from this process's event loop.
  const args = [join(root, 'dist/linux-x64/tea.cjs'), 'run', join(here, 'agent.yaml'), '--data-dir', dataDir, '--record', join(here, 'cassette.jsonl')]
  const child = spawn(process.execPath, args, { env: { ...process.env, OLLAMA_HOST: server.url }, stdio: 'inherit' })
  const status = await new Promise((resolve) => child.on('close', resolve))
  if (status !== 0) process.exitCode = 1
} finally {
  rmSync(dataDir, { recursive: true, force: true })
  await server.close()
}
