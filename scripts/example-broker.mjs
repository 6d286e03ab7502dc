// Starts a throwaway MQTT broker (Debian's mosquitto, when it is installed) for `npm run demo`'s examples that
// publish over MQTT: a free loopback port, its own config in a temp dir, nothing persisted. Resolves to
// `{url, stop}`, or to undefined when mosquitto is not here (the demo then says so and skips the example).
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'

const MOSQUITTO = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'].find((p) => existsSync(p))

export async function startExampleBroker() {
  if (!MOSQUITTO) return undefined
  const port = await new Promise((resolve, reject) => {
    const srv = createServer().once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
  const dir = mkdtempSync(join(tmpdir(), 'tea-demo-mqtt-'))
  // `user`: started as root, mosquitto would otherwise switch to the user `mosquitto`.
  writeFileSync(join(dir, 'mosquitto.conf'), `listener ${port} 127.0.0.1\nallow_anonymous true\nuser ${userInfo().username}\n`)
  const child = spawn(MOSQUITTO, ['-c', join(dir, 'mosquitto.conf'), '-v'], { stdio: ['ignore', 'ignore', 'pipe'] })
  await new Promise((resolve, reject) => {
    let log = ''
    child.stderr.on('data', (d) => {
      log += d
      if (/ running/.test(log)) resolve()
    })
    child.once('exit', (code) => reject(new Error(`mosquitto exited (${code}):\n${log}`)))
  })
  child.stderr.resume()
  return {
    url: `mqtt://127.0.0.1:${port}`,
    stop: () =>
      new Promise((done) => {
        child.once('exit', () => {
          rmSync(dir, { recursive: true, force: true })
          done()
        })
        child.kill('SIGTERM')
      }),
  }
}
