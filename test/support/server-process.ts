/**
 * A real server program for a test (nats-server, mosquitto), on a free loopback port: `launch` resolves once the
 * program's stderr says it is ready; `stop` ends it (SIGTERM, then SIGKILL if it lingers) and waits for the exit;
 * `restart` brings it back on the same port, with whatever it keeps on disk, as a board sees a server come back.
 */

import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0))
    })
  })
}

export interface ServerProgram {
  name: string
  /** The command line for a port (written again before each start, e.g. a config file naming the port). */
  command(port: number): [string, string[]]
  ready: RegExp
}

export interface ServerProcess {
  readonly port: number
  stop(): Promise<void>
  restart(): Promise<void>
}

export async function startServerProcess(program: ServerProgram): Promise<ServerProcess> {
  let port = await freePort()
  let child: ChildProcess | undefined
  const launch = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const [cmd, args] = program.command(port)
      const c = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] })
      child = c
      let log = ''
      const onData = (b: Buffer) => {
        log += b.toString()
        if (program.ready.test(log)) {
          c.stderr?.off('data', onData)
          c.stderr?.resume()
          resolve()
        }
      }
      c.stderr?.on('data', onData)
      c.once('exit', (code) => reject(new Error(`${program.name} exited (${code}) before it was ready:\n${log}`)))
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
  // The free port is free when asked, not necessarily when the program binds it: another test file running beside
  // this one may take it in between. Then the start fails, and another port is tried.
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
    get port() {
      return port
    },
    stop,
    restart: async () => {
      await stop()
      await launch()
    },
  }
}
