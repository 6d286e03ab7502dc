// Text patches applied to third-party files at bundle time. Every patch names the exact text it replaces and how
// many times it must occur, so a dependency upgrade that moves that text fails the build instead of shipping a
// bundle that breaks only inside the single executable.

/**
 * @param {string} text  the file's contents
 * @param {string} file  where it came from (for the error message)
 * @param {{ find: string | RegExp, replace: string | ((m: string) => string), count?: number, why: string }[]} patches
 */
export function applyPatches(text, file, patches) {
  let out = text
  for (const p of patches) {
    const expected = p.count ?? 1
    const found = countMatches(out, p.find)
    if (found !== expected) {
      throw new Error(
        `patch '${p.why}' expected ${expected} occurrence(s) of ${describe(p.find)} in ${file}, found ${found}; ` +
          'the dependency changed: update the patch in scripts/build/',
      )
    }
    if (typeof p.find === 'string') {
      const rep = p.replace
      out = out.split(p.find).join(typeof rep === 'function' ? rep(p.find) : rep)
    } else {
      const re = new RegExp(p.find.source, p.find.flags.includes('g') ? p.find.flags : p.find.flags + 'g')
      // A function replacement keeps `$` in the inserted text literal.
      out = out.replace(re, typeof p.replace === 'function' ? p.replace : () => p.replace)
    }
  }
  return out
}

function countMatches(text, find) {
  if (typeof find === 'string') return text.split(find).length - 1
  const re = new RegExp(find.source, find.flags.includes('g') ? find.flags : find.flags + 'g')
  return [...text.matchAll(re)].length
}

function describe(find) {
  const s = typeof find === 'string' ? JSON.stringify(find) : String(find)
  return s.length > 120 ? `${s.slice(0, 117)}...` : s
}
