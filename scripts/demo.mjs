// `npm run demo`: builds the linux-x64 bundle and runs every example offline, replaying its cassette. An example
// that pauses at an interrupt (exit 3) is resumed with the answer in its answer.json, as a person would answer it.
// Ends with one line per example.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startExampleBroker } from './example-broker.mjs'
import { serveSite } from './example-site.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const bundle = join(root, 'dist/linux-x64/tea.cjs')
const built = spawnSync(process.execPath, [join(root, 'build.mjs'), '--target', 'linux-x64', '--quiet'], { stdio: 'inherit' })
if (built.status !== 0) process.exit(built.status ?? 1)
const dataDir = mkdtempSync(join(tmpdir(), 'tea-demo-'))
const examples = readdirSync(join(root, 'examples'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort()
/** One line per example for the summary: name, outcome. */
const summary = []
const tea = (args, env) =>
  new Promise((resolve) => spawn(process.execPath, [bundle, ...args], { stdio: 'inherit', cwd: root, env }).on('close', resolve))
for (const name of examples) {
  const dir = join(root, 'examples', name)
  const cassette = join(dir, 'cassette.jsonl')
  console.error(`\n=== examples/${name} — replaying a recorded cassette (no model server is contacted)`)
  const replay = existsSync(cassette) ? ['--replay', cassette] : []
  const runId = `demo-${name}`
  const args = ['run', join(dir, 'agent.yaml'), '--data-dir', dataDir, '--run-id', runId, ...replay]
  // An example with a site/ folder fetches its page from a local server (scripts/example-site.mjs).
  const stop = existsSync(join(dir, 'site')) ? await serveSite(join(dir, 'site')) : undefined
  // One that publishes over MQTT gets a broker of its own, when mosquitto is installed (scripts/example-broker.mjs).
  const mqtt = readFileSync(join(dir, 'agent.yaml'), 'utf8').includes('mqtt.publish')
  const broker = mqtt ? await startExampleBroker() : undefined
  if (mqtt && !broker) {
    console.error(`examples/${name} publishes over MQTT: skipped, mosquitto is not installed (bash .ci/install-mqtt.sh)`)
    summary.push([name, 'skipped (no mosquitto: bash .ci/install-mqtt.sh)'])
    await stop?.()
    continue
  }
  const env = { ...process.env, ...(broker && { MQTT_URL: broker.url }) }
  let status = await tea(args, env)
  const answer = join(dir, 'answer.json')
  if (status === 3 && existsSync(answer)) {
    console.error(`\n--- paused for a person's answer; answering with ${readFileSync(answer, 'utf8').trim()} (answer.json)`)
    status = await tea(['resume', runId, '--data-dir', dataDir, '-i', `@${answer}`, ...replay], env)
  }
  await stop?.()
  await broker?.stop()
  if (status !== 0) console.error(`examples/${name} exited with ${status}`)
  summary.push([name, status === 0 ? 'ok' : `FAILED (exit ${status})`])
}
rmSync(dataDir, { recursive: true, force: true })
const failed = summary.filter(([, outcome]) => outcome.startsWith('FAILED')).length
const width = Math.max(...summary.map(([name]) => name.length))
console.error(`\n=== ${summary.length} examples, ${failed ? `${failed} failed` : 'none failed'}`)
for (const [name, outcome] of summary) console.error(`  ${name.padEnd(width)}  ${outcome}`)
process.exit(failed ? 1 : 0)
