/**
 * `file.*` confinement beyond plain paths (issue 9, reliability probe D5 and D9): hard links to files outside the
 * workspace, symlink loops and dangling links in a listed folder, and FIFOs that would block a read forever.
 * The symlink-swap race (D4) is in confinement-race.test.ts.
 */

import { execFileSync } from 'node:child_process'
import { closeSync, constants, linkSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { testContext, type TestContext } from '../context.ts'
import { expectOk, rejectsWith, runFileAction as run } from './run-file-action.ts'
import { tempDir } from '../../support/temp-dir.ts'

interface Ctx {
  ctx: TestContext
  outside: string
}

const confinement = suite<Ctx>('file.* confinement')

confinement.before.each((c) => {
  c.ctx = testContext()
  c.outside = tempDir('tea-outside-')
  writeFileSync(path.join(c.outside, 'target.txt'), 'outside original\n')
})

confinement.after.each((c) => {
  c.ctx.cleanup()
  rmSync(c.outside, { recursive: true, force: true })
})

confinement(
  'a hard link to an outside file is neither read nor appended to, and a replace leaves the outside file alone (D5)',
  async ({ ctx, outside }) => {
    const target = path.join(outside, 'target.txt')
    linkSync(target, path.join(ctx.workspace, 'hl.txt'))
    await rejectsWith(run(ctx, 'file.read', { path: 'hl.txt' }), 'PATH_OUTSIDE_WORKSPACE', 'hl.txt', 'hard link')
    await rejectsWith(
      run(ctx, 'file.write', { path: 'hl.txt', content: 'APPENDED\n', append: true }),
      'PATH_OUTSIDE_WORKSPACE',
      'hl.txt',
      'hard link',
    )
    assert.is(readFileSync(target, 'utf8'), 'outside original\n')
    // A replace renames a new file over the name: the link inside is broken, the outside file keeps its bytes.
    assert.equal(await expectOk(ctx, 'file.write', { path: 'hl.txt', content: 'replaced' }), { path: 'hl.txt', bytes: 8 })
    assert.is(readFileSync(target, 'utf8'), 'outside original\n')
    assert.equal(await expectOk(ctx, 'file.read', { path: 'hl.txt' }), { content: 'replaced', bytes: 8 })
  },
)

confinement('a hard link reached through a symlink inside the workspace is refused as well', async ({ ctx, outside }) => {
  mkdirSync(path.join(ctx.workspace, 'd'))
  linkSync(path.join(outside, 'target.txt'), path.join(ctx.workspace, 'd', 'hl.txt'))
  symlinkSync('d/hl.txt', path.join(ctx.workspace, 'alias.txt'))
  await rejectsWith(run(ctx, 'file.read', { path: 'alias.txt' }), 'PATH_OUTSIDE_WORKSPACE', 'alias.txt', 'hard link')
  await rejectsWith(run(ctx, 'file.write', { path: 'alias.txt', content: 'x', append: true }), 'PATH_OUTSIDE_WORKSPACE')
  assert.is(readFileSync(path.join(outside, 'target.txt'), 'utf8'), 'outside original\n')
})

confinement(
  'file.list reports a symlink loop and a dangling symlink on their own entries and lists the rest (D9)',
  async ({ ctx, outside }) => {
    const ws = ctx.workspace
    writeFileSync(path.join(ws, 'a.txt'), 'aa')
    mkdirSync(path.join(ws, 'sub'))
    symlinkSync('loop2', path.join(ws, 'loop1'))
    symlinkSync('loop1', path.join(ws, 'loop2'))
    symlinkSync('missing.txt', path.join(ws, 'dangling'))
    symlinkSync(path.join(outside, 'target.txt'), path.join(ws, 'leak.txt'))
    const { files } = (await expectOk(ctx, 'file.list', {})) as { files: Array<Record<string, unknown>> }
    assert.equal(
      files.map((f) => f.name),
      ['a.txt', 'dangling', 'loop1', 'loop2', 'sub'],
      'the outside link stays unlisted',
    )
    assert.equal(files[0], { name: 'a.txt', type: 'file', size: 2 })
    assert.equal(files[4], { name: 'sub', type: 'dir', size: 0 })
    for (const broken of files.slice(1, 4)) {
      assert.is(broken.type, 'unknown', String(broken.name))
      assert.is(broken.size, 0)
    }
    assert.match(String(files[1]!.error), 'does not exist')
    assert.match(String(files[2]!.error), 'loop of symbolic links')
    assert.match(String(files[3]!.error), 'loop of symbolic links')
  },
)

confinement('file.list of a folder holding a loop still lists it when filtered, and its subfolders too', async ({ ctx }) => {
  mkdirSync(path.join(ctx.workspace, 'd'))
  writeFileSync(path.join(ctx.workspace, 'd', 'x.md'), 'x')
  symlinkSync('self', path.join(ctx.workspace, 'd', 'self'))
  const md = (await expectOk(ctx, 'file.list', { path: 'd', pattern: '*.md' })) as { files: unknown[] }
  assert.equal(md.files, [{ name: 'x.md', type: 'file', size: 1 }])
  const all = (await expectOk(ctx, 'file.list', { path: 'd' })) as { files: Array<{ name: string }> }
  assert.equal(
    all.files.map((f) => f.name),
    ['self', 'x.md'],
  )
})

confinement('file.read and file.write of a FIFO fail promptly instead of blocking', async ({ ctx }) => {
  const fifo = path.join(ctx.workspace, 'pipe')
  execFileSync('mkfifo', [fifo])
  // Without O_NONBLOCK the open would wait for a writer forever; the timeout turns that into a failure, and the
  // writer opened afterwards releases the blocked open so the process can exit.
  const settle = async (p: Promise<unknown>): Promise<unknown> => {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise((resolve) => (timer = setTimeout(resolve, 3000, 'timed out')))
    const outcome = await Promise.race([
      p.then(
        () => 'resolved',
        (e: unknown) => e,
      ),
      timeout,
    ])
    clearTimeout(timer)
    if (outcome === 'timed out') {
      const release = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK)
      await p.catch(() => undefined)
      closeSync(release)
    }
    return outcome
  }
  const read = await settle(run(ctx, 'file.read', { path: 'pipe' }))
  assert.ok(read instanceof Error, `file.read of a FIFO: ${String(read)}`)
  assert.match(read.message, "'pipe' is not a regular file")
  const append = await settle(run(ctx, 'file.write', { path: 'pipe', content: 'x', append: true }))
  assert.ok(append instanceof Error, `file.write append to a FIFO: ${String(append)}`)
  assert.match(append.message, "'pipe'")
  assert.equal(readdirSync(ctx.workspace), ['pipe'])
})

confinement.run()
