/**
 * Runs the commands a document shows, as a reader would type them: the shell blocks of a Markdown section, one line
 * at a time, in one bash session (so an `alias`, a `cd`, an `export`, a job started with `&` and its `kill %1` carry
 * from line to line). Each line's exit code, stdout and stderr are read back between markers the session prints
 * after it. What a line's comment promises is checked by the caller (`promised`).
 */

import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { createWriteStream, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Writable } from 'node:stream'
import { tempDir } from '../support/temp-dir.ts'

export interface DocLine {
  /** The line as the document shows it. */
  text: string
  /** The command: the line without its trailing comment. */
  command: string
  /** The comment after `#`, trimmed ('' when none). */
  comment: string
}

/** The text of a Markdown section, from its heading (`## Title`, any level) to the next heading of that level or above. */
export function docSection(file: string, heading: string): string {
  const lines = readFileSync(file, 'utf8').split('\n')
  // A `# comment` inside a fenced block is no heading.
  let fenced = false
  const levels = lines.map((l) => {
    if (/^ {0,3}```/.test(l)) fenced = !fenced
    return !fenced && /^#+ /.test(l) ? /^#+/.exec(l)![0].length : 0
  })
  const at = lines.findIndex((l, i) => levels[i]! > 0 && l.replace(/^#+ /, '').trim() === heading)
  if (at < 0) throw new Error(`${file} has no heading '${heading}'`)
  const end = levels.findIndex((level, i) => i > at && level > 0 && level <= levels[at]!)
  return lines.slice(at + 1, end < 0 ? undefined : end).join('\n')
}

/** Every fenced block of `markdown`, in order: its info string (```sh test → `sh test`) and its text. */
export function fencedBlocks(markdown: string): Array<{ info: string; text: string }> {
  const blocks: Array<{ info: string; text: string }> = []
  let current: { info: string; lines: string[]; fence: string } | undefined
  for (const raw of markdown.split('\n')) {
    const line = raw.replace(/^ {0,3}/, '')
    if (!current) {
      const open = /^(`{3,})\s*(.*)$/.exec(line)
      if (open) current = { info: open[2]!.trim(), lines: [], fence: open[1]! }
      continue
    }
    if (line.trim() === current.fence) {
      blocks.push({ info: current.info, text: current.lines.join('\n') })
      current = undefined
    } else current.lines.push(raw)
  }
  return blocks
}

/** The shell lines of a block's text: blank and comment-only lines left out, a line ending in `\` joined to the next. */
export function shellLines(text: string): DocLine[] {
  const lines: DocLine[] = []
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    const prev = lines[lines.length - 1]
    if (prev?.text.endsWith('\\')) {
      prev.text = `${prev.text.slice(0, -1)}${line}`
      Object.assign(prev, splitComment(prev.text))
    } else if (line !== '' && !line.startsWith('#')) lines.push({ text: line, ...splitComment(line) })
  }
  return lines
}

/** The fenced blocks of `markdown` whose info string is `info` (```sh, or ```sh test), as shell lines. */
export function codeBlocks(markdown: string, info: string): DocLine[][] {
  return fencedBlocks(markdown)
    .filter((b) => b.info === info)
    .map((b) => shellLines(b.text))
}

/** `cmd 'a # b'   # what it does` → command `cmd 'a # b'`, comment `what it does`: a `#` after a blank, outside quotes. */
export function splitComment(line: string): { command: string; comment: string } {
  let quote = ''
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (quote) {
      if (c === quote) quote = ''
      else if (c === '\\' && quote === '"') i++
    } else if (c === "'" || c === '"') quote = c
    else if (c === '\\') i++
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!)))
      return { command: line.slice(0, i).trim(), comment: line.slice(i + 1).trim() }
  }
  return { command: line.trim(), comment: '' }
}

/**
 * What a line's comment promises, for the caller to hold the line to: `exit N` (else 0), and every JSON fragment
 * written in double quotes (`"queue": "engineering"`, `"outcome":"done"`), which stdout must contain (blanks aside).
 */
export function promised(comment: string): { exit: number; fragments: string[] } {
  const exit = /\bexit (\d+)\b/.exec(comment)
  const fragments = [...comment.matchAll(/"[^"]+":\s*(?:"[^"]*"|[\d.]+|true|false|null)/g)].map((m) => m[0])
  return { exit: exit ? Number(exit[1]) : 0, fragments }
}

/** `text` without blanks, for comparing JSON fragments with JSON printed indented or not. */
export const squeeze = (text: string): string => text.replace(/\s+/g, '')

export interface LineResult {
  code: number
  stdout: string
  stderr: string
}

/** One bash session in `cwd`: lines go in one at a time; every process it starts is killed by `close`. */
export class Shell {
  private readonly child: ChildProcess
  private readonly input: Writable
  private out = ''
  private err = ''
  private count = 0
  private readonly waiters = new Set<() => void>()
  private exited = false

  constructor(cwd: string, env: Record<string, string | undefined>) {
    const clean: Record<string, string> = {}
    for (const [k, v] of Object.entries(env)) if (v !== undefined) clean[k] = v
    // The lines come through a named pipe, so a command's stdin is /dev/null (a command that reads stdin gets
    // nothing, as a reader's terminal gives nothing unasked). Its own process group: close() ends the session and
    // every job it left behind at once.
    const fifo = join(tempDir('tea-doc-shell-'), 'lines')
    execFileSync('mkfifo', [fifo])
    this.child = spawn('bash', ['--norc', '--noprofile', fifo], { cwd, env: clean, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    this.input = createWriteStream(fifo)
    this.child.stdout!.on('data', (d) => this.heard(() => (this.out += d)))
    this.child.stderr!.on('data', (d) => this.heard(() => (this.err += d)))
    this.child.on('exit', () => this.heard(() => (this.exited = true)))
    this.input.on('error', () => {})
    // Aliases, as an interactive shell has them.
    this.input.write('shopt -s expand_aliases\n')
  }

  /** Everything the session wrote on stderr so far (its background jobs' lines too). */
  stderr(): string {
    return this.err
  }

  /** Runs one line and resolves with its exit code and what it printed. */
  async run(line: string, timeoutMs = 60_000): Promise<LineResult> {
    const marker = `__doc_line_${++this.count}__`
    const outFrom = this.out.length
    const errFrom = this.err.length
    this.input.write(`${line}\nprintf '\\n${marker} %s\\n' "$?"; printf '\\n${marker}\\n' >&2\n`)
    const pattern = new RegExp(`\\n${marker} (\\d+)\\n`)
    await this.until(() => pattern.test(this.out.slice(outFrom)) && this.err.slice(errFrom).includes(`\n${marker}\n`), timeoutMs, line)
    const out = this.out.slice(outFrom)
    const m = pattern.exec(out)!
    return {
      code: Number(m[1]),
      stdout: out.slice(0, m.index),
      stderr: this.err.slice(errFrom, this.err.indexOf(`\n${marker}\n`, errFrom)),
    }
  }

  /**
   * Resolves with the first match of `pattern` in the session's stderr from offset `from` on (a background job's
   * ready line).
   */
  async waitErr(pattern: RegExp, timeoutMs = 30_000, from = 0): Promise<RegExpExecArray> {
    await this.until(() => pattern.test(this.err.slice(from)), timeoutMs, `stderr matching ${pattern}`)
    return pattern.exec(this.err.slice(from))!
  }

  async close(): Promise<void> {
    if (!this.exited) {
      try {
        process.kill(-this.child.pid!, 'SIGKILL')
      } catch {}
      await this.until(() => this.exited, 10_000, 'the end of the session')
    }
  }

  private heard(change: () => void): void {
    change()
    for (const w of this.waiters) w()
  }

  private until(ready: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((done, fail) => {
      const check = (): void => {
        if (!ready()) {
          if (this.exited) finish(new Error(`the shell ended while waiting for: ${what}\nstderr:\n${this.err.slice(-4000)}`))
          return
        }
        finish()
      }
      const timer = setTimeout(
        () =>
          finish(
            new Error(`no end within ${timeoutMs} ms of: ${what}\nstdout:\n${this.out.slice(-4000)}\nstderr:\n${this.err.slice(-4000)}`),
          ),
        timeoutMs,
      )
      const finish = (e?: Error): void => {
        clearTimeout(timer)
        this.waiters.delete(check)
        if (e) fail(e)
        else done()
      }
      this.waiters.add(check)
      check()
    })
  }
}
