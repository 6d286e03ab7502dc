/**
 * Issue 29 through the bundle: TEA's Python that also parses as JavaScript runs as Python when JavaScript can only
 * fail on it (`tea validate` names the sign); `dynamic_parallel` with `subgraph:` runs the sub-agent beside the
 * agent once per item; `settings.parallel.strategy: remote` is refused at load.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, tea } from './cli.ts'

const Langs = suite("TEA's run: languages and parallel modes (end to end)")

const MINIMAL = `name: minimal
nodes:
  - name: step1
    run: |
      return {"result": state.get("value", 0) * 2}
`

Langs('29 a body that is JavaScript and Python, but can only fail as JavaScript, runs as Python; validate says why', async () => {
  const s = scratch({ 'a.yaml': MINIMAL })
  const v = await tea(['validate', s.path('a.yaml')])
  assert.is(v.code, 0, v.stderr)
  assert.match(v.stdout, "  run: step1: python (as JavaScript it can only fail: state.get(…) is not a function on tea's state)\n")
  const r = await tea(['run', s.path('a.yaml'), '-i', '{"value": 21}', '-q'])
  assert.is(r.code, 0, r.stderr)
  assert.is(JSON.parse(r.stdout).result, 42)
  s.cleanup()
})

const PARENT = `name: batch
nodes:
  - name: setup
    run: "return { secret: 's3', sources: [{ name: 'a', n: 1 }, { name: 'b', n: 5 }] }"
  - name: fan
    type: dynamic_parallel
    items: "{{ state.sources }}"
    item_var: source
    subgraph: ./per-item.yaml
    input:
      name: "{{ source.name }}"
      n: "{{ source.n }}"
    output: results
    fan_in: join
  - name: join
    run: "return { labels: state.results.map((r) => r.state.label) }"
`
const SUB = `name: per-item
nodes:
  - name: first
    run: "return { doubled: state.n * 2, secret_seen: state.secret !== undefined }"
  - name: second
    run: "return { label: state.name + ':' + state.doubled + ':' + state.secret_seen }"
`

Langs('29 dynamic_parallel with subgraph: runs the sub-agent per item from its input mapping', async () => {
  const s = scratch({ 'a.yaml': PARENT, 'per-item.yaml': SUB })
  const r = await tea(['run', s.path('a.yaml'), '-q'])
  assert.is(r.code, 0, r.stderr)
  assert.equal(JSON.parse(r.stdout).labels, ['a:2:false', 'b:10:false'])
  s.cleanup()
})

Langs('29 settings.parallel strategy: remote is refused at load, saying why', async () => {
  const s = scratch({ 'a.yaml': `name: r\nsettings:\n  parallel:\n    strategy: remote\nnodes:\n  - name: a\n    run: "return {}"\n` })
  const v = await tea(['validate', s.path('a.yaml')])
  assert.is.not(v.code, 0)
  assert.match(v.stdout + v.stderr, "'remote' runs them on other hosts over SSH, which tea does not provide")
  s.cleanup()
})

Langs.run()
