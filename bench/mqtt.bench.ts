/**
 * `tea serve`'s MQTT triggers (issue 32): how many messages per second become started runs, and what an idle
 * daemon holds with the broker connected. Drives the built bundle (`node build.mjs --target linux-x64` first) as a
 * user runs it: a real mosquitto (test/support/mosquitto.ts), a serve config with one trigger, messages published
 * by a client of our own. Run: `node --import tsx bench/mqtt.bench.ts [--quick]`; prints a markdown table (medians
 * of 3 rounds, min–max).
 *
 * - idle RSS: VmRSS of the daemon 3 s after its trigger is subscribed, against the same daemon started with no
 *   `mqtt:` in its config (the difference is what MQTT costs: the client, its socket, the journal).
 * - messages → started runs: N QoS 1 messages published at once; the time from the first publish until the log
 *   says the N-th run started (taken, written down, acknowledged, its agent loaded and its run queued), and until
 *   the N-th run completed (a 1-node agent, `--max-concurrent 2`).
 */

import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { connectAsync } from 'mqtt'
import { startMosquitto } from '../test/support/mosquitto.ts'
import { tempDir } from '../test/support/temp-dir.ts'

const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 1 : 3
const MESSAGES = quick ? 100 : 500
const BUNDLE = resolve(import.meta.dirname, '../dist/linux-x64/tea.cjs')

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const span = (xs: number[], digits = 1) =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024

interface Daemon {
  pid: number
  count(pattern: RegExp): number
  until(pattern: RegExp, times?: number): Promise<void>
  stop(): Promise<void>
}

function startDaemon(dir: string, config: string): Daemon {
  writeFileSync(join(dir, 'serve.yaml'), config)
  const child = spawn(
    process.execPath,
    [
      BUNDLE,
      'serve',
      '--config',
      join(dir, 'serve.yaml'),
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      join(dir, 'data'),
      '--min-free-mb',
      '0',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  let err = ''
  const waiters = new Set<() => void>()
  child.stderr!.on('data', (d) => {
    err += d
    for (const w of waiters) w()
  })
  const count = (pattern: RegExp) => err.match(new RegExp(pattern.source, 'g'))?.length ?? 0
  return {
    pid: child.pid!,
    count,
    until: (pattern, times = 1) =>
      new Promise((done, fail) => {
        const check = () => {
          if (count(pattern) >= times) {
            waiters.delete(check)
            done()
          }
        }
        child.once('exit', () => fail(new Error(`tea serve exited:\n${err}`)))
        waiters.add(check)
        check()
      }),
    stop: () =>
      new Promise((done) => {
        child.once('exit', () => done())
        child.kill('SIGTERM')
      }),
  }
}

const idle = { mqtt: [] as number[], none: [] as number[] }
const started: number[] = []
const completed: number[] = []
for (let round = 0; round < ROUNDS; round++) {
  const broker = await startMosquitto()
  const dir = tempDir('tea-bench-mqtt-')
  mkdirSync(join(dir, 'agents'))
  writeFileSync(join(dir, 'agents/count.yaml'), 'name: count\nnodes:\n  - name: a\n    run: "return { seen: state.payload }"\n')
  const plain = startDaemon(dir, 'agents: agents\n')
  await plain.until(/listening on/)
  await new Promise((r) => setTimeout(r, 3000))
  idle.none.push(rssMiB(plain.pid))
  await plain.stop()
  const d = startDaemon(
    dir,
    `agents: agents\nmqtt: { url: "${broker.url}", client_id: bench-${round} }\ntriggers:\n  - { name: bench, agent: count, mqtt: "bench/#", qos: 1 }\n`,
  )
  await d.until(/trigger bench: subscribed/)
  await new Promise((r) => setTimeout(r, 3000))
  idle.mqtt.push(rssMiB(d.pid))
  const client = await connectAsync(broker.url)
  const t0 = performance.now()
  await Promise.all(Array.from({ length: MESSAGES }, (_, i) => client.publishAsync(`bench/${i % 10}`, JSON.stringify({ i }), { qos: 1 })))
  await d.until(/trigger bench: started/, MESSAGES)
  started.push(MESSAGES / ((performance.now() - t0) / 1000))
  await d.until(/run bench-\S+ completed/, MESSAGES)
  completed.push(MESSAGES / ((performance.now() - t0) / 1000))
  await client.endAsync()
  await d.stop()
  await broker.cleanup()
}

console.log(`| what (${ROUNDS} round${ROUNDS === 1 ? '' : 's'}, ${MESSAGES} messages each) | median (min–max) |\n|---|---|`)
console.log(`| idle RSS, MQTT connected, one trigger subscribed | ${span(idle.mqtt)} MiB |`)
console.log(`| idle RSS, the same daemon without mqtt: | ${span(idle.none)} MiB |`)
console.log(`| messages → started runs | ${span(started, 0)} msg/s |`)
console.log(`| messages → completed runs (1-node agent, --max-concurrent 2) | ${span(completed, 0)} msg/s |`)
