import { randomBytes } from 'node:crypto'

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz'

/**
 * A sortable random id: 10 characters of millisecond time then 8 random characters, Crockford base32,
 * lower case (`01jd3k5m7q-…` style without the dash). Sorting ids as strings sorts them by creation time, which
 * is what `tea runs` lists by.
 */
export function sortableId(now = Date.now()): string {
  let time = ''
  let t = now
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32]! + time
    t = Math.floor(t / 32)
  }
  const bytes = randomBytes(8)
  let rand = ''
  for (const b of bytes) rand += CROCKFORD[b % 32]!
  return time + rand
}
