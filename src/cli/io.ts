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
  // A reader that goes away (`tea run --stream | head`) must not crash the run: the run finishes and is recorded;
  // only its output is lost.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e
  })
  return {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    isTTY: Boolean(process.stderr.isTTY),
    env: process.env,
    cwd: process.cwd(),
    readStdin: async () => {
      const chunks: Buffer[] = []
      for await (const c of process.stdin) chunks.push(c as Buffer)
      return Buffer.concat(chunks).toString('utf8')
    },
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
