/**
 * The descriptor walk under `file.*` (src/actions/file/beneath.ts): what it relies on from the kernel (a name looked
 * up through /proc/self/fd/N stays in the folder N holds) and what it checks afterwards (a folder moved out of the
 * workspace while held is refused).
 */

import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeSync } from 'node:fs'
import path from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { inFolder, locateInWorkspace } from '../../../src/actions/file/beneath.ts'
import { rejectsWith } from './run-file-action.ts'
import { tempDir } from '../../support/temp-dir.ts'

interface Ctx {
  base: string
  ws: string
  outside: string
}

const beneath = suite<Ctx>('file.* descriptor walk')

beneath.before.each((c) => {
  c.base = tempDir('tea-beneath-')
  c.ws = path.join(c.base, 'ws')
  c.outside = path.join(c.base, 'outside')
  mkdirSync(path.join(c.ws, 'd'), { recursive: true })
  mkdirSync(c.outside)
})

beneath.after.each((c) => rmSync(c.base, { recursive: true, force: true }))

beneath(
  'a name is looked up in the folder the walk holds, even after that folder was renamed and replaced by a symlink',
  async ({ ws, outside }) => {
    await locateInWorkspace('file.write', ws, 'd/x.txt', {}, async ({ dir, name }) => {
      renameSync(path.join(ws, 'd'), path.join(ws, 'moved'))
      symlinkSync(outside, path.join(ws, 'd'))
      const fd = openSync(inFolder(dir, name!), 'wx')
      writeSync(fd, 'held')
      closeSync(fd)
    })
    assert.is(readFileSync(path.join(ws, 'moved', 'x.txt'), 'utf8'), 'held')
    assert.equal(readdirSync(outside), [])
  },
)

beneath('a folder moved out of the workspace while the walk holds it fails verification', async ({ ws, outside }) => {
  const moved = locateInWorkspace('file.write', ws, 'd/x.txt', {}, async ({ dir }, w) => {
    renameSync(path.join(ws, 'd'), path.join(outside, 'd'))
    w.verify(dir, 'd/x.txt')
  })
  await rejectsWith(moved, 'PATH_OUTSIDE_WORKSPACE', 'd/x.txt', 'moved out of the workspace', path.join(outside, 'd'))
})

beneath('symlinks that stay inside are followed: relative, with .., absolute, and through a symlinked workspace', async ({ base, ws }) => {
  mkdirSync(path.join(ws, 'd', 'e'))
  symlinkSync('d/e', path.join(ws, 'rel'))
  symlinkSync('..', path.join(ws, 'd', 'e', 'up'))
  symlinkSync(path.join(ws, 'd'), path.join(ws, 'abs'))
  const linkedWs = path.join(base, 'ws-link')
  symlinkSync(ws, linkedWs)
  symlinkSync(path.join(linkedWs, 'd', 'e'), path.join(ws, 'via-config'))
  const where = (workspace: string, given: string): Promise<string> =>
    locateInWorkspace('file.read', workspace, given, {}, async ({ relative }) => relative)
  assert.is(await where(ws, 'rel/f.txt'), 'd/e/f.txt')
  assert.is(await where(ws, 'rel/up/f.txt'), 'd/f.txt')
  assert.is(await where(ws, 'abs/e/f.txt'), 'd/e/f.txt')
  assert.is(await where(linkedWs, 'via-config/f.txt'), 'd/e/f.txt')
  assert.is(await where(ws, '.'), '.')
})

beneath('a symlink whose target climbs out with .. is refused even when the name it lands on exists inside', async ({ ws, outside }) => {
  symlinkSync('../../outside', path.join(ws, 'd', 'out'))
  symlinkSync('../..', path.join(ws, 'd', 'top'))
  const never = async (): Promise<never> => assert.unreachable('the walk reached the target') as never
  await rejectsWith(locateInWorkspace('file.read', ws, 'd/out/x', {}, never), 'PATH_OUTSIDE_WORKSPACE', 'symlink', outside)
  await rejectsWith(locateInWorkspace('file.read', ws, 'd/top/ws/d', {}, never), 'PATH_OUTSIDE_WORKSPACE', 'symlink')
})

beneath.run()
