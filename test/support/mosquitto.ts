/**
 * A real MQTT broker for a test: Debian's `mosquitto` (installed by .ci/install-mqtt.sh) on a free loopback port,
 * with its own config and persistence folder in a temp dir. `start()` resolves once the broker listens; `stop()`
 * ends it (SIGTERM, which writes its persistence file; SIGKILL if it lingers) and waits for the exit; `restart()`
 * brings it back on the same port with the same persistence, as a board sees its broker come back after an outage:
 * persistent sessions and their queued QoS 1 messages survive it.
 */

import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import { startServerProcess } from './server-process.ts'
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

/** `extra`: more lines for mosquitto.conf (a limit, a password file). */
export async function startMosquitto(extra: string[] = []): Promise<Mosquitto> {
  const dir = tempDir('tea-mqtt-')
  const writeConfig = (port: number): void =>
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
  const broker = await startServerProcess({
    name: 'mosquitto',
    command: (port) => {
      writeConfig(port)
      return [MOSQUITTO, ['-c', join(dir, 'mosquitto.conf')]]
    },
    ready: /mosquitto version \S+ running/,
  })
  return {
    get url() {
      return `mqtt://127.0.0.1:${broker.port}`
    },
    get port() {
      return broker.port
    },
    dir,
    stop: broker.stop,
    restart: broker.restart,
    cleanup: async () => {
      await broker.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
