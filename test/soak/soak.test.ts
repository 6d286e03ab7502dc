/** A fixed, fast slice of the soak (test/soak/soak.ts; `npm run soak` runs the full counts). */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { failures, report, soak } from './soak.ts'

test('soak slice: SIGKILLs at random points of a run and a plan resume to the same output, races have one winner, malformed inputs fail coded, hostile JSON into every entry point fails coded and tea serve still answers (issue 28 item 1)', async () => {
  const counts = { linearKills: 3, planKills: 3, races: 2, inputs: 5000, fuzz: 2000, seed: 20261124 }
  const figures = await soak(counts)
  assert.equal(failures(figures), [], report(figures, counts))
  assert.is(figures.inputs.total, 5000)
  assert.is(figures.races.exactlyOne, 2)
  assert.is(figures.fuzz.total, 2000)
  assert.ok(figures.fuzz.byKind['tea serve body']! > 0 && figures.fuzz.byKind['model reply (Ollama client)']! > 0)
})

test.run()
