/**
 * A real NATS server for a test: Debian's `nats-server -js` (installed by .ci/install-sea-deps.sh) on a free
 * loopback port, JetStream file storage in a temp dir. `start()` resolves once the server says it is ready;
 * `stop()` ends it (SIGTERM, then SIGKILL if it lingers) and waits for the exit; `restart()` brings it back on the
 * same port and store, as a board would see a server come back after an outage.
 */

import { rmSync } from 'node:fs'
import type { Test } from 'uvu'
import { commandMissing } from './skip.ts'
import { startServerProcess } from './server-process.ts'
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

export async function startNatsServer(args: string[] = []): Promise<NatsServer> {
  const storeDir = tempDir('tea-nats-')
  const server = await startServerProcess({
    name: 'nats-server',
    command: (port) => ['nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir, ...args]],
    ready: /Server is ready/,
  })
  return {
    url: `nats://127.0.0.1:${server.port}`,
    port: server.port,
    storeDir,
    stop: server.stop,
    restart: server.restart,
    cleanup: async () => {
      await server.stop()
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
