import { createHash } from 'node:crypto'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { sha256Hex } from '../../src/core/sha256.ts'

const node = (text: string): string => createHash('sha256').update(text).digest('hex')

test('the agent hash is SHA-256 as node:crypto computes it, across padding boundaries and UTF-8', () => {
  const texts = [
    '',
    'abc',
    'a'.repeat(55),
    'a'.repeat(56),
    'a'.repeat(63),
    'a'.repeat(64),
    'a'.repeat(119),
    'héllo ✓ 🍵\n',
    'x'.repeat(100_003),
  ]
  for (const t of texts) assert.is(sha256Hex(t), node(t), `length ${t.length}`)
})

test('the FIPS 180-2 example digests', () => {
  assert.is(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  assert.is(
    sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'),
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
  )
})

test.run()
