/**
 * Issue 28 item 11 (security probe 2, K), the part that needs no full filesystem: lmdb's own print of a failed
 * commit is dropped while every other console.error still prints (test/e2e/store-full.test.ts fills a real tmpfs
 * and checks every command's stderr).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { TeaError } from '../../src/core/errors.ts'
import { quietLmdbCommitErrors } from '../../src/store/full-disk.ts'

test("28-11 lmdb's print of a failed commit (an Error with a numeric status code) is dropped; other errors still print", () => {
  const printed: unknown[][] = []
  const target = { error: (...args: unknown[]) => void printed.push(args) }
  quietLmdbCommitErrors(target)
  quietLmdbCommitErrors(target) // once: a second store opened in the process does not wrap it again
  const eio = Object.assign(new Error('Input/output error'), { code: 5 })
  const mapFull = Object.assign(new Error('MDB_MAP_FULL: Environment mapsize limit reached'), { code: -30792 })
  const nodeError = Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
  const tea = new TeaError('STORE_FULL', 'full')
  target.error(eio)
  target.error(mapFull)
  target.error(nodeError)
  target.error(tea)
  target.error('In aftercommit callback', eio)
  target.error('plain text')
  assert.equal(printed, [[nodeError], [tea], ['In aftercommit callback', eio], ['plain text']])
})

test.run()
