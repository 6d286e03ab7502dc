/**
 * A real MQTT broker for a test: Debian's `mosquitto` (installed by .ci/install-mqtt.sh) on a free loopback port,
 * with its own config and persistence folder in a temp dir. `start()` resolves once the broker listens; `stop()`
 * ends it (SIGTERM, which writes its persistence file; SIGKILL if it lingers) and waits for the exit; `restart()`
 * brings it back on the same port with the same persistence, as a board sees its broker come back after an outage:
 * persistent sessions and their queued QoS 1 messages survive it.
 */

import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import { tempDir } from './temp-dir.ts'

/** Where Debian puts the broker: /usr/sbin is not on every user's PATH. */
export const MOSQUITTO = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'].find((p) => existsSync(p)) ?? 'mosquitto'

export interface Mosquitto {
  url: string
  port: number
  dir: string
  stop(): Promise<void>
  restart(): Promise<void>
  /** Stops the broker and removes its folder. */
  cleanup(): Promise<void>
}

/** Why the broker cannot run here, or undefined when it can (for `skipIf`). */
export function mosquittoMissing(): string | undefined {
  // `mosquitto -h` exits 3, so the check is that the program is there, not that it answers.
  return existsSync(MOSQUITTO) ? undefined : 'mosquitto is not installed (apt-get install mosquitto; .ci/install-mqtt.sh does it)'
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

/** `extra`: more lines for mosquitto.conf (a limit, a password file). */
export async function startMosquitto(extra: string[] = []): Promise<Mosquitto> {
  let port = await freePort()
  const dir = tempDir('tea-mqtt-')
  let child: ChildProcess | undefined
  const writeConfig = (): void =>
    writeFileSync(
      join(dir, 'mosquitto.conf'),
      [
        `listener ${port} 127.0.0.1`,
        'allow_anonymous true',
        // Started as root, mosquitto drops to the user `mosquitto`, who cannot write this folder: stay who we are.
        `user ${userInfo().username}`,
        'persistence true',
        `persistence_location ${dir}/`,
        'log_dest stderr',
        'log_type error',
        'log_type warning',
        'log_type notice',
        'log_type information',
        ...extra,
        '',
      ].join('\n'),
    )
  const launch = (): Promise<void> =>
    new Promise((resolve, reject) => {
      writeConfig()
      const c = spawn(MOSQUITTO, ['-c', join(dir, 'mosquitto.conf')], { stdio: ['ignore', 'ignore', 'pipe'] })
      child = c
      let log = ''
      const onData = (b: Buffer) => {
        log += b.toString()
        if (/mosquitto version \S+ running/.test(log)) {
          c.stderr?.off('data', onData)
          c.stderr?.resume()
          resolve()
        }
      }
      c.stderr?.on('data', onData)
      c.once('exit', (code) => reject(new Error(`mosquitto exited (${code}) before it was ready:\n${log}`)))
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
  // The free port is free when asked, not necessarily when mosquitto binds it: another test file may take it in
  // between. Then the start fails, and another port is tried.
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
    get url() {
      return `mqtt://127.0.0.1:${port}`
    },
    get port() {
      return port
    },
    dir,
    stop,
    restart: async () => {
      await stop()
      await launch()
    },
    cleanup: async () => {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
