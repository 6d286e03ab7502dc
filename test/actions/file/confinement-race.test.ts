/**
 * D4 of the reliability probe (issue 9): another local process swaps a workspace folder for a symlink to the
 * outside while `file.*` actions run. The swap runs in a worker thread, in parallel with the actions, doing what
 * the probe did: `realdir` and `evil -> ../outside` take turns at the name `raced` through rename(), in a tight
 * loop. Whatever the interleaving, no byte may be written or read outside; how many calls were refused depends on
 * timing and is only reported (TEA_TEST_VERBOSE=1), never asserted.
 */

import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../../src/core/errors.ts'
import { testContext } from '../context.ts'
import { runFileAction } from './run-file-action.ts'
import { tempDir } from '../../support/temp-dir.ts'

const SWAPPER = `
const { workerData } = require('node:worker_threads')
const { renameSync } = require('node:fs')
const { dir, flags } = workerData
const at = (name) => dir + '/' + name
const move = (from, to) => { try { renameSync(at(from), at(to)) } catch {} }
// flags[0]: 1 = stop; flags[1]: completed swap cycles.
while (Atomics.load(flags, 0) === 0) {
  move('realdir', 'raced')
  move('raced', 'realdir')
  move('evil', 'raced')
  move('raced', 'evil')
  Atomics.add(flags, 1, 1)
}
`

const CREATES = 1500
const APPENDS = 1500
const READS = 1000

test('file.write and file.read never reach outside while a folder is swapped for a symlink (D4)', async () => {
  const base = tempDir('tea-race-')
  const ws = path.join(base, 'ws')
  const outside = path.join(base, 'outside')
  mkdirSync(path.join(ws, 'realdir'), { recursive: true })
  mkdirSync(outside)
  writeFileSync(path.join(ws, 'realdir', 'r.txt'), 'inside')
  writeFileSync(path.join(outside, 'r.txt'), 'OUTSIDE')
  writeFileSync(path.join(outside, 'a.txt'), 'orig')
  symlinkSync('../outside', path.join(ws, 'evil'))
  const ctx = testContext({ settings: { workspace: ws } })

  const flags = new Int32Array(new SharedArrayBuffer(8))
  const swapper = new Worker(SWAPPER, { eval: true, workerData: { dir: ws, flags } })
  const exited = new Promise((resolve) => swapper.once('exit', resolve))
  const refused = { create: 0, append: 0, read: 0 }
  const reasons = new Map<string, number>()
  let outsideReads = 0
  let otherErrors = ''
  const attempt = async (kind: keyof typeof refused, params: Record<string, unknown>): Promise<unknown> => {
    try {
      return await runFileAction(ctx, kind === 'read' ? 'file.read' : 'file.write', params)
    } catch (e) {
      refused[kind]++
      if (!isTeaError(e, 'FILE_ERROR') && !isTeaError(e, 'PATH_OUTSIDE_WORKSPACE')) otherErrors ||= String(e)
      const reason = `${(e as { code?: string }).code} ${String((e as Error).message)
        .replace(/^.*?' /, '')
        .replace(/[;(].*/, '')}`
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
      return undefined
    }
  }
  try {
    for (let i = 0; i < Math.max(CREATES, APPENDS, READS); i++) {
      if (i < CREATES) await attempt('create', { path: `raced/f${i}.txt`, content: 'x', mkdir: false })
      if (i < APPENDS) await attempt('append', { path: 'raced/a.txt', content: 'y', append: true, mkdir: false })
      if (i < READS) {
        const r = (await attempt('read', { path: 'raced/r.txt' })) as { content?: string } | undefined
        if (r?.content === 'OUTSIDE') outsideReads++
      }
    }
  } finally {
    Atomics.store(flags, 0, 1)
    await exited
  }
  const escapedFiles = readdirSync(outside).filter((n) => n !== 'r.txt' && n !== 'a.txt')
  // The real folder is at `realdir` or `raced`, wherever the swapper stopped: every write reported done is there.
  const real = ['realdir', 'raced'].map((n) => path.join(ws, n)).find((p) => lstatSync(p, { throwIfNoEntry: false })?.isDirectory())
  const created = readdirSync(real!).filter((n) => /^f\d+\.txt$/.test(n)).length
  const appended = lstatSync(path.join(real!, 'a.txt'), { throwIfNoEntry: false })?.size ?? 0
  const appendedOutside = readFileSync(path.join(outside, 'a.txt'), 'utf8').length - 'orig'.length
  if (process.env.TEA_TEST_VERBOSE) {
    console.error(
      `race: ${Atomics.load(flags, 1)} swap cycles; refused ${refused.create}/${CREATES} creates, ` +
        `${refused.append}/${APPENDS} appends, ${refused.read}/${READS} reads; inside: ${created} files, ${appended} bytes appended; ` +
        `outside: ${escapedFiles.length} files, ${appendedOutside} bytes appended, ${outsideReads} reads\n` +
        [...reasons].map(([reason, n]) => `  ${n} × ${reason}`).join('\n'),
    )
  }
  try {
    assert.ok(Atomics.load(flags, 1) > 0, 'the swapper never completed a cycle: the test raced nothing')
    assert.is(otherErrors, '', 'every refusal is FILE_ERROR or PATH_OUTSIDE_WORKSPACE')
    assert.equal(escapedFiles, [], 'no file created outside the workspace')
    assert.is(appendedOutside, 0, 'no byte appended outside the workspace')
    assert.is(readFileSync(path.join(outside, 'r.txt'), 'utf8'), 'OUTSIDE')
    assert.is(outsideReads, 0, 'no read returned the outside file')
    assert.is(created, CREATES - refused.create, 'every create reported done is in the real folder')
    assert.is(appended, APPENDS - refused.append, 'every append reported done is in the real folder')
  } finally {
    ctx.cleanup()
    rmSync(base, { recursive: true, force: true })
  }
})

test.run()
