/**
 * Issue 29 item 1 through the bundle: TEA's unmarked Python `run:` runs as Python, `tea validate` says which
 * language each body runs in and why, and `tea resume` keeps the languages the run started with after the file
 * changed.
 */
import { writeFileSync } from 'node:fs'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, tea } from './cli.ts'

const Lang = suite('run: languages as TEA chooses them (end to end)')

/** 'check' reads as JavaScript and as Python (as JavaScript it fails: `type` is Python's); 'first' decides. */
const agent = (first: string): string =>
  `name: lang\nnodes:\n  - name: first\n    run: ${JSON.stringify(first)}\n  - name: check\n    interrupt: before\n    run: 'return {"kind": type(state["x"]).__name__}'\n`

Lang('29-1 tea validate prints the language of each run: body and why', async () => {
  const s = scratch({ 'a.yaml': agent('# TEA Python\nreturn {"x": 1}') })
  const r = await tea(['validate', s.path('a.yaml')])
  assert.is(r.code, 0, r.stderr)
  assert.match(r.stdout, '  run: first: python (not JavaScript; reads as Python)\n')
  assert.match(r.stdout, "  run: check: python (the file's language, set by its first Python body)\n")
  s.cleanup()
})

Lang('29-1 tea resume runs the bodies in the languages recorded at start, though the edited file would choose JavaScript', async () => {
  const s = scratch({ 'a.yaml': agent('# TEA Python\nreturn {"x": 1}') })
  const data = s.path('data')
  const first = await tea(['run', s.path('a.yaml'), '--data-dir', data, '--run-id', 'r1', '-q'])
  assert.is(first.code, 3, first.stderr)
  writeFileSync(s.path('a.yaml'), agent('return {"x": 1}'))
  const fresh = await tea(['validate', s.path('a.yaml')])
  assert.match(fresh.stdout, '  run: check: javascript')
  const resumed = await tea(['resume', 'r1', '--data-dir', data, '-q'])
  assert.is(resumed.code, 0, resumed.stderr)
  assert.equal(JSON.parse(resumed.stdout), { x: 1, kind: 'int' })
  s.cleanup()
})

Lang.run()
