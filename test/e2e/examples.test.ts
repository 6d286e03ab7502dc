/** Every example runs offline from its cassette, as `npm run demo` runs it; the self-correcting one corrects once. */
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { serveSite } from '../../scripts/example-site.mjs'
import { mosquittoMissing, startMosquitto } from '../support/mosquitto.ts'
import { skipIf } from '../support/skip.ts'
import { ROOT, scratch, tea } from './cli.ts'

const examples = readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)

for (const name of examples) {
  // An example that publishes over MQTT runs against a broker of its own, as `npm run demo` gives it one.
  const mqtt = readFileSync(join(ROOT, 'examples', name, 'agent.yaml'), 'utf8').includes('mqtt.publish')
  skipIf(test, mqtt && mosquittoMissing(), `examples/${name} replays its cassette to the end`, async () => {
    const dir = join(ROOT, 'examples', name)
    assert.ok(existsSync(join(dir, 'cassette.jsonl')), 'every example carries a cassette')
    const s = scratch()
    const stop = existsSync(join(dir, 'site')) ? await serveSite(join(dir, 'site')) : undefined
    const broker = mqtt ? await startMosquitto() : undefined
    try {
      const options = { timeoutMs: 60_000, ...(broker && { env: { MQTT_URL: broker.url } }) }
      const replay = ['--replay', join(dir, 'cassette.jsonl'), '--data-dir', s.path('data'), '-q']
      let r = await tea(['run', join(dir, 'agent.yaml'), '--run-id', 'example', ...replay], options)
      // An example that pauses for a person (exit 3) is answered from its answer.json, as `npm run demo` answers it.
      if (existsSync(join(dir, 'answer.json'))) {
        assert.is(r.code, 3, r.stderr)
        r = await tea(['resume', 'example', '-i', `@${join(dir, 'answer.json')}`, ...replay], options)
      }
      assert.is(r.code, 0, r.stderr)
      if (name === 'react-tools') {
        const state = JSON.parse(r.stdout)
        assert.equal(state.tools_used, ['web.scrape', 'memory.store', 'file.write', 'finish'])
        assert.match(state.research.steps[0].observation, 'Saturday: 10:00 – 14:00')
        assert.is(readFileSync(join(dir, 'out', 'hours.md'), 'utf8').includes('Saturday: 10:00–14:00'), true)
        // Without -q, each ReAct step shows on stderr as it happens.
        const shown = await tea(['run', join(dir, 'agent.yaml'), '--replay', join(dir, 'cassette.jsonl'), '--data-dir', s.path('data')])
        assert.is(shown.code, 0, shown.stderr)
        assert.match(shown.stderr, 'research · react_step 1 · web.scrape\n  research · react_step 2 · memory.store')
        // With --stream, each step is a `reasoning` event on stdout.
        const streamed = await tea([
          'run',
          join(dir, 'agent.yaml'),
          '--replay',
          join(dir, 'cassette.jsonl'),
          '--data-dir',
          s.path('data'),
          '--stream',
        ])
        const steps = streamed.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l))
          .filter((e) => e.type === 'reasoning')
        assert.equal(
          steps.map((e) => [e.node, e.action, e.entry.index, e.entry.action]),
          [
            ['research', 'reason.react', 1, 'web.scrape'],
            ['research', 'reason.react', 2, 'memory.store'],
            ['research', 'reason.react', 3, 'file.write'],
            ['research', 'reason.react', 4, 'finish'],
          ],
        )
      }
      if (name === 'lua-answer') {
        const state = JSON.parse(r.stdout)
        assert.equal([state.answer, state.found, state.reply_words], ['Canberra', true, 19])
      }
      if (name === 'prolog-schedule') {
        const state = JSON.parse(r.stdout)
        assert.equal([state.hour, state.status, state.summary], [10, 'scheduled', 'Ana, Bo, Cy: meet at 10:00'])
      }
      if (name === 'extract-with-retry') {
        const state = JSON.parse(r.stdout)
        assert.equal([state.summary, state.corrections, state._retry_exhausted], ['Ada Lovelace child_of Lord Byron', 2, false])
      }
      if (name === 'approval') {
        const state = JSON.parse(r.stdout)
        assert.equal(
          [state.approved, state.done, state.log],
          [true, 'water bed 3 for 5 minutes', 'Bed 3: watered for 5 minutes (soil moisture was 12 %).'],
        )
      }
      if (name === 'mqtt-alarm') {
        const state = JSON.parse(r.stdout)
        assert.equal([state.published.topic, state.published.success], ['tea/alarm/hall', true])
      }
    } finally {
      await broker?.cleanup()
      await stop?.()
      rmSync(join(dir, 'out'), { recursive: true, force: true }) // what an example wrote into its workspace
      s.cleanup()
    }
  })
}

test.run()
