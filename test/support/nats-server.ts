/**
 * A real NATS server for a test: Debian's `nats-server -js` (installed by .ci/install-sea-deps.sh) on a free
 * loopback port, JetStream file storage in a temp dir. `start()` resolves once the server says it is ready;
 * `stop()` ends it (SIGTERM, then SIGKILL if it lingers) and waits for the exit; `restart()` brings it back on the
 * same port and store, as a board would see a server come back after an outage.
 */

import { type ChildProcess, spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { createServer } from 'node:net'
import type { Test } from 'uvu'
import { commandMissing } from './skip.ts'
import { tempDir } from './temp-dir.ts'

export interface NatsServer {
  url: string
  port: number
  storeDir: string
  stop(): Promise<void>
  restart(): Promise<void>
  /** Stops the server and removes its store. */
  cleanup(): Promise<void>
}

/** Why the server cannot run here, or undefined when it can (for `skipIf`). */
export function natsServerMissing(): string | undefined {
  return commandMissing('nats-server', ['--version'], 'apt-get install nats-server; .ci/install-sea-deps.sh does it')
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0))
    })
  })
}

export async function startNatsServer(args: string[] = []): Promise<NatsServer> {
  let port = await freePort()
  const storeDir = tempDir('tea-nats-')
  let child: ChildProcess | undefined
  const launch = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const c = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir, ...args], {
        stdio: ['ignore', 'ignore', 'pipe'],
      })
      child = c
      let log = ''
      const onData = (b: Buffer) => {
        log += b.toString()
        if (log.includes('Server is ready')) {
          c.stderr?.off('data', onData)
          c.stderr?.resume()
          resolve()
        }
      }
      c.stderr?.on('data', onData)
      c.once('exit', (code) => reject(new Error(`nats-server exited (${code}) before it was ready:\n${log}`)))
    })
  const stop = async (): Promise<void> => {
    const c = child
    child = undefined
    if (!c || c.exitCode !== null || c.signalCode !== null) return
    const exited = new Promise<void>((r) => c.once('exit', () => r()))
    c.kill('SIGTERM')
    const timer = setTimeout(() => c.kill('SIGKILL'), 5_000)
    await exited
    clearTimeout(timer)
  }
  // The free port is free when asked, not necessarily when nats-server binds it: another test file running beside
  // this one may take it in between. Then the first start fails, and another port is tried.
  for (let attempt = 1; ; attempt++) {
    try {
      await launch()
      break
    } catch (e) {
      if (attempt === 3 || !/address already in use/i.test(String(e))) throw e
      port = await freePort()
    }
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    stop,
    restart: async () => {
      await stop()
      await launch()
    },
    cleanup: async () => {
      await stop()
      rmSync(storeDir, { recursive: true, force: true })
    },
  }
}

/**
 * One server for a test file's tests: started before the first unless `missing` says nats-server is not here,
 * stopped after the last, when `remove` (the file's scratch folders) is removed too.
 */
export function natsServerForFile(t: Test, missing: string | undefined, ...remove: string[]): { readonly server: NatsServer } {
  let server: NatsServer | undefined
  t.before(async () => {
    if (!missing) server = await startNatsServer()
  })
  t.after(async () => {
    await server?.cleanup()
    for (const dir of remove) rmSync(dir, { recursive: true, force: true })
  })
  return {
    get server() {
      if (!server) throw new Error(`no NATS server: ${missing ?? 'not started yet'}`)
      return server
    },
  }
}
