/**
 * The small glob `file.list` accepts: `*` (any run of characters), `?` (one character) and `[abc]` / `[a-z]`
 * classes, matched against a whole file name. No `**` and no `/`: the listing is of one directory.
 */

export function globToRegExp(pattern: string): RegExp {
  let re = ''
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === '*') re += '.*'
    else if (c === '?') re += '.'
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 2)
      if (close === -1) re += '\\['
      else {
        const body = pattern.slice(i + 1, close)
        re += '[' + (body.startsWith('!') ? '^' + escapeClass(body.slice(1)) : escapeClass(body)) + ']'
        i = close
      }
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  }
  return new RegExp(`^${re}$`, 's')
}

function escapeClass(body: string): string {
  return body.replace(/[\\\]^]/g, '\\$&')
}
