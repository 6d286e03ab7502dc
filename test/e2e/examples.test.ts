/** Every example runs offline from its cassette, as `npm run demo` runs it; the self-correcting one corrects once. */
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ROOT, scratch, tea } from './cli.ts'

const examples = readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)

for (const name of examples) {
  test(`examples/${name} replays its cassette to the end`, async () => {
    const dir = join(ROOT, 'examples', name)
    assert.ok(existsSync(join(dir, 'cassette.jsonl')), 'every example carries a cassette')
    const s = scratch()
    try {
      const r = await tea(['run', join(dir, 'agent.yaml'), '--replay', join(dir, 'cassette.jsonl'), '--data-dir', s.path('data'), '-q'], {
        timeoutMs: 60_000,
      })
      assert.is(r.code, 0, r.stderr)
      if (name === 'extract-with-retry') {
        const state = JSON.parse(r.stdout)
        assert.equal([state.summary, state.corrections, state._retry_exhausted], ['Ada Lovelace child_of Lord Byron', 1, false])
      }
    } finally {
      s.cleanup()
    }
  })
}

test.run()
