import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { toJsonSchema } from '@valibot/to-json-schema'
import { isTeaError } from '../../../src/core/errors.ts'
import type { Action } from '../../../src/actions/types.ts'
import { fileActions } from '../../../src/actions/file/index.ts'
import { testContext, type TestContext } from '../context.ts'
import { rejects } from '../../support/expect.ts'
import { tempDir } from '../../support/temp-dir.ts'

const byName = (name: string): Action => fileActions.find((a) => a.name === name)!

/** Runs an action as the engine would: parameters validated (defaults applied) first. */
async function run(ctx: TestContext, name: string, params: unknown): Promise<Record<string, unknown>> {
  const action = byName(name)
  return action.run(v.parse(action.params, params), ctx) as Promise<Record<string, unknown>>
}

interface Ctx {
  ctx: TestContext
  outside: string
}

const files = suite<Ctx>('file actions')

files.before.each((c) => {
  c.ctx = testContext()
  c.outside = tempDir('tea-outside-')
  writeFileSync(path.join(c.outside, 'secret.txt'), 'top secret')
})

files.after.each((c) => {
  c.ctx.cleanup()
  rmSync(c.outside, { recursive: true, force: true })
})

files('file.write then file.read round-trips text and reports bytes', async ({ ctx }) => {
  const w = await run(ctx, 'file.write', { path: 'notes/today.md', content: 'héllo' })
  assert.equal(w, { path: 'notes/today.md', bytes: 6 })
  assert.is(readFileSync(path.join(ctx.workspace, 'notes/today.md'), 'utf8'), 'héllo')
  assert.equal(await run(ctx, 'file.read', { path: 'notes/today.md' }), { content: 'héllo', bytes: 6 })
})

files('file.write writes non-string content as JSON and leaves no temp files behind', async ({ ctx }) => {
  await run(ctx, 'file.write', { path: 'out.json', content: { a: [1, 2] } })
  assert.equal(JSON.parse(readFileSync(path.join(ctx.workspace, 'out.json'), 'utf8')), { a: [1, 2] })
  await run(ctx, 'file.write', { path: 'out.json', content: 'replaced' })
  assert.is(readFileSync(path.join(ctx.workspace, 'out.json'), 'utf8'), 'replaced')
  assert.equal(readdirSync(ctx.workspace), ['out.json'])
})

files('file.write appends when asked', async ({ ctx }) => {
  await run(ctx, 'file.write', { path: 'log.txt', content: 'a\n' })
  const r = await run(ctx, 'file.write', { path: 'log.txt', content: 'b\n', append: true })
  assert.equal(r, { path: 'log.txt', bytes: 2 })
  assert.is(readFileSync(path.join(ctx.workspace, 'log.txt'), 'utf8'), 'a\nb\n')
})

files('file.write with mkdir false fails with FILE_ERROR when the folder is missing', async ({ ctx }) => {
  await rejects(run(ctx, 'file.write', { path: 'no/such/dir.txt', content: 'x', mkdir: false }), 'FILE_ERROR', 'no/such/dir.txt')
})

files('file.read returns base64 for binary content', async ({ ctx }) => {
  writeFileSync(path.join(ctx.workspace, 'b.bin'), Buffer.from([0, 255, 1]))
  assert.equal(await run(ctx, 'file.read', { path: 'b.bin', encoding: 'base64' }), { content: 'AP8B', bytes: 3 })
})

files('file.read of a missing file is FILE_ERROR naming the path', async ({ ctx }) => {
  await rejects(run(ctx, 'file.read', { path: 'missing.txt' }), 'FILE_ERROR', "'missing.txt' does not exist", ctx.workspace)
})

files('file.read refuses a file larger than max_bytes', async ({ ctx }) => {
  writeFileSync(path.join(ctx.workspace, 'big.txt'), 'x'.repeat(100))
  await rejects(run(ctx, 'file.read', { path: 'big.txt', max_bytes: 10 }), 'FILE_ERROR', '100 bytes', 'max_bytes 10')
})

files('file.read of a directory is FILE_ERROR', async ({ ctx }) => {
  mkdirSync(path.join(ctx.workspace, 'd'))
  await rejects(run(ctx, 'file.read', { path: 'd' }), 'FILE_ERROR', 'is a directory')
})

files('a path that stays inside through .. is allowed', async ({ ctx }) => {
  await run(ctx, 'file.write', { path: 'a/../b.txt', content: 'ok' })
  assert.equal(await run(ctx, 'file.read', { path: 'b.txt' }), { content: 'ok', bytes: 2 })
})

files('refuses ../ escapes for read, write and list', async ({ ctx, outside }) => {
  const rel = path.relative(ctx.workspace, path.join(outside, 'secret.txt'))
  await rejects(run(ctx, 'file.read', { path: rel }), 'PATH_OUTSIDE_WORKSPACE', rel, ctx.workspace)
  await rejects(run(ctx, 'file.read', { path: '../x.txt' }), 'PATH_OUTSIDE_WORKSPACE', '../x.txt')
  await rejects(run(ctx, 'file.write', { path: 'a/../../x.txt', content: 'x' }), 'PATH_OUTSIDE_WORKSPACE')
  await rejects(run(ctx, 'file.list', { path: '..' }), 'PATH_OUTSIDE_WORKSPACE')
  assert.is(readFileSync(path.join(outside, 'secret.txt'), 'utf8'), 'top secret')
})

files('refuses absolute paths such as /etc/passwd, even inside the workspace', async ({ ctx }) => {
  await rejects(run(ctx, 'file.read', { path: '/etc/passwd' }), 'PATH_OUTSIDE_WORKSPACE', '/etc/passwd', 'absolute')
  await rejects(run(ctx, 'file.write', { path: path.join(ctx.workspace, 'x.txt'), content: 'x' }), 'PATH_OUTSIDE_WORKSPACE')
})

files('refuses a symlink leading out of the workspace, for files and folders', async ({ ctx, outside }) => {
  symlinkSync(path.join(outside, 'secret.txt'), path.join(ctx.workspace, 'link.txt'))
  symlinkSync(outside, path.join(ctx.workspace, 'out'))
  await rejects(run(ctx, 'file.read', { path: 'link.txt' }), 'PATH_OUTSIDE_WORKSPACE', 'link.txt', 'symlink')
  await rejects(run(ctx, 'file.read', { path: 'out/secret.txt' }), 'PATH_OUTSIDE_WORKSPACE', 'out/secret.txt')
  await rejects(run(ctx, 'file.write', { path: 'out/new.txt', content: 'x' }), 'PATH_OUTSIDE_WORKSPACE')
  await rejects(run(ctx, 'file.write', { path: 'link.txt', content: 'x', append: true }), 'PATH_OUTSIDE_WORKSPACE')
  await rejects(run(ctx, 'file.list', { path: 'out' }), 'PATH_OUTSIDE_WORKSPACE')
  assert.equal(readdirSync(outside), ['secret.txt'])
  assert.is(readFileSync(path.join(outside, 'secret.txt'), 'utf8'), 'top secret')
})

files('refuses a dangling symlink whose target lies outside (a write would create it there)', async ({ ctx, outside }) => {
  symlinkSync(path.join(outside, 'created.txt'), path.join(ctx.workspace, 'dangling.txt'))
  await rejects(run(ctx, 'file.write', { path: 'dangling.txt', content: 'x', append: true }), 'PATH_OUTSIDE_WORKSPACE')
  await rejects(run(ctx, 'file.write', { path: 'dangling.txt', content: 'x' }), 'PATH_OUTSIDE_WORKSPACE')
  assert.equal(readdirSync(outside), ['secret.txt'])
})

files('a symlink loop is FILE_ERROR, for existing and dangling loops alike', async ({ ctx }) => {
  symlinkSync('loop-b', path.join(ctx.workspace, 'loop-a'))
  symlinkSync('loop-a', path.join(ctx.workspace, 'loop-b'))
  await rejects(run(ctx, 'file.read', { path: 'loop-a' }), 'FILE_ERROR', 'loop-a', 'symbolic links')
  await rejects(run(ctx, 'file.write', { path: 'loop-b/x.txt', content: 'x' }), 'FILE_ERROR', 'loop-b/x.txt')
})

files('follows symlinks that stay inside the workspace', async ({ ctx }) => {
  writeFileSync(path.join(ctx.workspace, 'real.txt'), 'inside')
  symlinkSync('real.txt', path.join(ctx.workspace, 'alias.txt'))
  assert.equal(await run(ctx, 'file.read', { path: 'alias.txt' }), { content: 'inside', bytes: 6 })
})

files('works when the workspace itself is reached through a symlink', async ({ ctx, outside }) => {
  const linkedWorkspace = path.join(outside, 'ws-link')
  symlinkSync(ctx.workspace, linkedWorkspace)
  const viaLink = testContext({ settings: { workspace: linkedWorkspace } })
  assert.equal(await run(viaLink, 'file.write', { path: 'x.txt', content: 'ok' }), { path: 'x.txt', bytes: 2 })
  assert.is(readFileSync(path.join(ctx.workspace, 'x.txt'), 'utf8'), 'ok')
})

files('file.list lists one folder sorted by name with type and size, filtered by a glob', async ({ ctx, outside }) => {
  writeFileSync(path.join(ctx.workspace, 'b.md'), 'bb')
  writeFileSync(path.join(ctx.workspace, 'a.md'), 'a')
  writeFileSync(path.join(ctx.workspace, 'c.txt'), 'ccc')
  mkdirSync(path.join(ctx.workspace, 'sub.md'))
  symlinkSync(path.join(outside, 'secret.txt'), path.join(ctx.workspace, 'leak.md'))
  assert.equal(await run(ctx, 'file.list', {}), {
    files: [
      { name: 'a.md', type: 'file', size: 1 },
      { name: 'b.md', type: 'file', size: 2 },
      { name: 'c.txt', type: 'file', size: 3 },
      { name: 'sub.md', type: 'dir', size: 0 },
    ],
  })
  const md = (await run(ctx, 'file.list', { path: '.', pattern: '*.md' })) as { files: Array<{ name: string }> }
  assert.equal(
    md.files.map((f) => f.name),
    ['a.md', 'b.md', 'sub.md'],
  )
  const one = (await run(ctx, 'file.list', { pattern: '?.[st]*' })) as { files: Array<{ name: string }> }
  assert.equal(
    one.files.map((f) => f.name),
    ['c.txt'],
  )
  const notA = (await run(ctx, 'file.list', { pattern: '[!a]*.md' })) as { files: Array<{ name: string }> }
  assert.equal(
    notA.files.map((f) => f.name),
    ['b.md', 'sub.md'],
  )
})

files('file.list of a missing folder is FILE_ERROR naming it', async ({ ctx }) => {
  await rejects(run(ctx, 'file.list', { path: 'nope' }), 'FILE_ERROR', "'nope'")
})

files('every action has a one-sentence description and params convertible to a described JSON Schema', () => {
  assert.equal(
    fileActions.map((a) => a.name),
    ['file.read', 'file.write', 'file.list'],
  )
  for (const action of fileActions) {
    assert.match(action.description, /^[A-Z][^]*\.$/)
    const schema = toJsonSchema(action.params) as { properties: Record<string, { description?: string }> }
    for (const [key, prop] of Object.entries(schema.properties)) assert.ok(prop.description, `${action.name}.${key}`)
  }
})

files.run()
