/**
 * Issue 15 item 3: a CRLF body is kept byte for byte (the reference splits on LF only and keeps the `\r`), and
 * `contentHash` is the hash of the body on disk after every write.
 */

import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createTask, getTask, lintDataDir, transitionTask } from '../../../../src/aof/index.ts'
import { T1, withFixture } from '../../helpers.ts'

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16)

/** The body and hash as the reference reads them: split on LF, the lines after the closing fence, trimmed. */
function onDisk(path: string): { body: string; contentHash: string | undefined } {
  const lines = readFileSync(path, 'utf8').split('\n')
  const end = lines.indexOf('---', 1)
  const hashLine = lines.slice(1, end).find((l) => l.startsWith('contentHash: '))
  return {
    body: lines
      .slice(end + 1)
      .join('\n')
      .trim(),
    contentHash: hashLine?.slice('contentHash: '.length),
  }
}

test(
  'a CRLF body survives create and every move byte for byte, and contentHash stays the hash of it',
  withFixture(async (f) => {
    const task = await createTask(f.ctx, { id: T1, title: 'crlf', body: 'a\r\nb\r\n\r\nc', status: 'backlog' })
    assert.equal(onDisk(task.path), { body: 'a\r\nb\r\n\r\nc', contentHash: hash('a\r\nb\r\n\r\nc') })
    await transitionTask(f.ctx, T1, 'ready', { actor: 'ops' })
    const moved = (await getTask(f.ctx, T1))!
    assert.is(moved.body, 'a\r\nb\r\n\r\nc')
    assert.equal(onDisk(moved.path), { body: 'a\r\nb\r\n\r\nc', contentHash: hash('a\r\nb\r\n\r\nc') })
  }),
)

test(
  "the interop repro: body 'a\\r\\nb' keeps contentHash 18745f36a05e2907 through a move (it used to become 'a\\nb' under that stale hash)",
  withFixture(async (f) => {
    const task = await createTask(f.ctx, { id: T1, title: 'crlf', body: 'a\r\nb', status: 'backlog' })
    assert.is(onDisk(task.path).contentHash, '18745f36a05e2907')
    await transitionTask(f.ctx, T1, 'ready', { actor: 'ops' })
    assert.equal(onDisk((await getTask(f.ctx, T1))!.path), { body: 'a\r\nb', contentHash: '18745f36a05e2907' })
  }),
)

test(
  "a stale contentHash left by another writer is corrected by tea's next write",
  withFixture(async (f) => {
    const task = await createTask(f.ctx, { id: T1, title: 'stale', body: 'old body', status: 'backlog' })
    const text = readFileSync(task.path, 'utf8').replace('old body', 'new body')
    writeFileSync(task.path, text)
    assert.is.not(onDisk(task.path).contentHash, hash('new body'))
    await transitionTask(f.ctx, T1, 'ready', { actor: 'ops' })
    assert.equal(onDisk(join(f.dir, 'tasks', 'ready', `${T1}.md`)), { body: 'new body', contentHash: hash('new body') })
  }),
)

test(
  'a file with CRLF fences and frontmatter is read (the reference rejects it) and its body keeps its CRLF',
  withFixture(async (f) => {
    const task = await createTask(f.ctx, { id: T1, title: 'fences', body: 'x', status: 'backlog' })
    const lf = readFileSync(task.path, 'utf8')
    writeFileSync(task.path, lf.replace('\n\nx\n', '\n\nx\ny\n').replace(/\n/g, '\r\n'))
    const read = (await getTask(f.ctx, T1))!
    assert.is(read.body, 'x\r\ny')
    assert.is(read.data.title, 'fences')
    assert.equal(lintDataDir(f.ctx), [])
  }),
)

test.run()
