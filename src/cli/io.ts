import { fstatSync, writeSync } from 'node:fs'

/** Where a command writes. The CLI is the only layer that prints; everything below returns values or emits events. */
export interface Io {
  out(text: string): void
  err(text: string): void
  /** stderr is a terminal: live progress lines are allowed. */
  isTTY: boolean
  env: NodeJS.ProcessEnv
  cwd: string
  /** Reads all of stdin (for `-` arguments). */
  readStdin(): Promise<string>
}

export function processIo(): Io {
  return {
    out: directWriter(1, () => process.stdout),
    err: directWriter(2, () => process.stderr),
    // Asked only by the progress display (not with -q or --stream).
    get isTTY() {
      return stderrIsTerminal()
    },
    env: process.env,
    cwd: process.cwd(),
    readStdin: async () => {
      const chunks: Buffer[] = []
      for await (const c of process.stdin) chunks.push(c as Buffer)
      return Buffer.concat(chunks).toString('utf8')
    },
  }
}

/**
 * Whether stderr is a terminal, without creating process.stderr where the answer is no: creating it loads Node's
 * stream and net modules (~3–5 ms, the largest single cost of a short `tea run` after the program's compile; issue
 * 14), and a board's timers, scripts and services give tea a pipe, a socket, a file or /dev/null. A terminal is a
 * character device, and the memory devices (major 1: /dev/null, /dev/zero) never are one; only another character
 * device is asked as before (Node's answer is isatty(2)).
 */
function stderrIsTerminal(): boolean {
  let rdev: number
  try {
    const stat = fstatSync(2)
    if (!stat.isCharacterDevice()) return false
    rdev = stat.rdev
  } catch {
    return false // no stderr at all
  }
  if (((rdev >>> 8) & 0xfff) === MEMORY_DEVICES_MAJOR) return false
  return Boolean(process.stderr.isTTY)
}

/** Linux's device major of /dev/null, /dev/zero, /dev/full and /dev/random. */
const MEMORY_DEVICES_MAJOR = 1

/**
 * Writes to a standard stream's file descriptor directly. Creating process.stdout costs a start ~3 ms for a file
 * and ~5 ms for a pipe (it loads Node's stream and socket modules), ~10% of what a short `tea run` takes (issue 14);
 * on Linux those streams write synchronously anyway, so output and its order are the same. A descriptor left
 * non-blocking by whoever started tea (EAGAIN) falls back to the stream for the rest. A reader that goes away
 * (`tea run --stream | head`, EPIPE) must not crash the run: the run finishes and is recorded; only its output is
 * lost.
 */
function directWriter(fd: 1 | 2, stream: () => NodeJS.WriteStream): (text: string) => void {
  let viaStream = false
  let gone = false
  return (text) => {
    if (gone) return
    if (viaStream) return void stream().write(text)
    let bytes = Buffer.from(text)
    while (bytes.length > 0) {
      try {
        bytes = bytes.subarray(writeSync(fd, bytes))
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code
        if (code === 'EPIPE') {
          gone = true
          return
        }
        if (code !== 'EAGAIN') throw e
        viaStream = true
        const s = stream()
        s.on('error', (err: NodeJS.ErrnoException) => {
          if (err.code !== 'EPIPE') throw err
        })
        s.write(bytes)
        return
      }
    }
  }
}

/** An Io that keeps what is written, for tests and for embedding a command: `stdout` and `stderr` read it back. */
export interface MemoryIo extends Io {
  readonly stdout: string
  readonly stderr: string
}

export function memoryIo(options: { cwd?: string; env?: NodeJS.ProcessEnv; stdin?: string; isTTY?: boolean } = {}): MemoryIo {
  let stdout = ''
  let stderr = ''
  return {
    out: (t) => void (stdout += t),
    err: (t) => void (stderr += t),
    isTTY: options.isTTY ?? false,
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
    readStdin: async () => options.stdin ?? '',
    get stdout() {
      return stdout
    },
    get stderr() {
      return stderr
    },
  }
}
