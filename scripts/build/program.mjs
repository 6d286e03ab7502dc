// The bundle file's format: the loader (src/sea/loader.ts, which reads this format back) followed by the
// program inside a comment, so that loading the file costs V8 a scan for the comment's end rather than a parse.
// Inside the comment every `*/` of the program is written `*\x01/`; esbuild's output never contains a raw \x01
// (it escapes control characters), which the build checks, so the escape is exact.

export const PROGRAM_MARK = '/*tea:program\n'
export const COMMENT_END_ESCAPED = '*\x01/'

/** `loader` and `program` (both minified CommonJS) as one file. */
export function composeBundle(loader, program) {
  if (program.includes('\x01')) throw new Error('the program contains a raw \\x01, which the bundle format uses as its escape')
  // One character outside ASCII makes V8 keep the whole ~700 KB program at two bytes a character (src/sea/loader.ts).
  // esbuild escapes it in strings and templates, not in a regular expression literal (ours or a package's, e.g. the
  // NATS client's /(ns|us|µs)/): there, and in comments, \uXXXX means the same code unit, so each is escaped here.
  program = asciiOnly(program)
  if (program.includes(PROGRAM_MARK)) throw new Error(`the program contains the bundle's program mark ${JSON.stringify(PROGRAM_MARK)}`)
  // The loader finds the mark as the first line that starts with it.
  if (`\n${loader}`.includes(`\n${PROGRAM_MARK}`)) throw new Error(`the loader has a line that starts with the program mark`)
  return `${loader.trimEnd()}\n${PROGRAM_MARK}${program.replaceAll('*/', COMMENT_END_ESCAPED)}\n*/\n`
}

/** The loader part of a bundle file (what a single executable runs as its main script). */
export function loaderOf(bundleText) {
  const at = bundleText.indexOf(`\n${PROGRAM_MARK}`)
  if (at < 0) throw new Error('not a bundle made by build.mjs: it has no program mark')
  return bundleText.slice(0, at + 1)
}

/** Every UTF-16 code unit outside ASCII written as a \\uXXXX escape (a pair for a character beyond the BMP). */
function asciiOnly(text) {
  return text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
