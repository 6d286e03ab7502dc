const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz'

/**
 * A sortable random id: 10 characters of millisecond time then 8 random characters, Crockford base32,
 * lower case (`01jd3k5m7q-…` style without the dash). Sorting ids as strings sorts them by creation time, which
 * is what `tea runs` lists by. The random part tells apart ids made in the same millisecond (by any process: V8
 * seeds each isolate's generator from the OS); an id is not a secret, so it comes from Math.random rather than
 * node:crypto, which would cost every `tea run` ~6 ms of start (issue 14).
 */
export function sortableId(now = Date.now()): string {
  let time = ''
  let t = now
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32]! + time
    t = Math.floor(t / 32)
  }
  let rand = ''
  for (let i = 0; i < 8; i++) rand += CROCKFORD[Math.floor(Math.random() * 32)]!
  return time + rand
}
