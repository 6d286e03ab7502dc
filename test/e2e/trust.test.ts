/**
 * Issue 28 through the CLI, as an attacker would come at it: hostile input to `tea run`, a state value aimed at
 * becoming Python code, code in any language under `allow_inline_code: false`. (Serve, the sandboxes of each
 * language, shell providers and outbound HTTP have their own files beside this one.)
 */
import { existsSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, tea } from './cli.ts'

const STACK = /^\s+at .+[:(]\d+/m

test('probe A: input nested 1,500 deep is INPUT_TOO_DEEP (exit 2), with no stack; the store is untouched', async () => {
  const s = scratch({ 'a.yaml': 'name: a\nnodes:\n  - name: x\n    run: "return { ok: true }"\n' })
  try {
    const deep = `{"x": ${'['.repeat(1500)}${']'.repeat(1500)}}`
    const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-i', deep])
    assert.is(r.code, 2, r.stderr)
    assert.match(r.stderr, /INPUT_TOO_DEEP/)
    assert.not.match(r.stderr, STACK)
    const set = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '--set', `x=${'['.repeat(3000)}`])
    assert.is(set.code, 2, set.stderr)
    assert.match(set.stderr, /INPUT_TOO_DEEP/)
    const runs = await tea(['runs', '--data-dir', s.path('data'), '--json'])
    assert.is(runs.code, 0, runs.stderr)
    assert.equal(JSON.parse(runs.stdout), [])
  } finally {
    s.cleanup()
  }
})

test('a node whose code returns a value nested 10,000 deep fails coded (STATE_TOO_DEEP), and the run is listed and resumable', async () => {
  const agent = `name: deep
nodes:
  - name: grow
    run: |
      let v = 1
      for (let i = 0; i < 10000; i++) v = [v]
      return { v }
`
  const s = scratch({ 'a.yaml': agent })
  try {
    const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data')])
    assert.is(r.code, 1, r.stderr)
    assert.match(r.stderr, /STATE_TOO_DEEP/)
    assert.not.match(r.stderr, STACK)
    const runs = await tea(['runs', '--data-dir', s.path('data'), '--json'])
    const [run] = JSON.parse(runs.stdout)
    assert.is(run.status, 'failed')
  } finally {
    s.cleanup()
  }
})

const PY_GREET = `name: py
nodes:
  - name: greet
    language: python
    run: |
      name = "{{ state.name }}"
      note = '{{ state.name }}'  # {{ state.name }}
      return {"name": name, "note": note}
`

test('issue 28 item 4 (probe B): a name of quotes, backslashes and "; import os; …" reaches Python as exactly that string, and runs nothing', async () => {
  const s = scratch({ 'py.yaml': PY_GREET })
  try {
    const name = 'x"; import os; os.system("id > pwned"); y="\\\'\n\'; os.system(\'id > pwned\') #'
    const r = await tea(['run', s.path('py.yaml'), '--data-dir', s.path('data'), '-i', JSON.stringify({ name })], {
      cwd: s.dir,
      timeoutMs: 120_000,
    })
    assert.is(r.code, 0, r.stderr)
    const out = JSON.parse(r.stdout)
    assert.is(out.name, name)
    assert.is(out.note, name)
    assert.not.ok(existsSync(s.path('pwned')))
  } finally {
    s.cleanup()
  }
})

test('issue 28 item 4: text in Python code outside a string literal is refused (CODE_TEMPLATE_UNSAFE), not run', async () => {
  const agent = 'name: py\nnodes:\n  - name: x\n    language: python\n    run: |\n      v = {{ state.expr }}\n      return {"v": v}\n'
  const s = scratch({ 'py.yaml': agent })
  try {
    const r = await tea(['run', s.path('py.yaml'), '--data-dir', s.path('data'), '-i', '{"expr": "__import__(\'os\').getcwd()"}'], {
      timeoutMs: 120_000,
    })
    assert.is(r.code, 1, r.stderr)
    assert.match(r.stderr, /CODE_TEMPLATE_UNSAFE/)
    const n = await tea(['run', s.path('py.yaml'), '--data-dir', s.path('data'), '-i', '{"expr": [1, true, null]}'], { timeoutMs: 120_000 })
    assert.is(n.code, 0, n.stderr)
    assert.equal(JSON.parse(n.stdout).v, [1, true, null])
  } finally {
    s.cleanup()
  }
})

test('issue 28 item 5: allow_inline_code: false refuses code in every language and every code-running action when the file loads', async () => {
  const files: Record<string, string> = {
    'py.yaml':
      'name: py\nsettings: { allow_inline_code: false }\nnodes:\n  - name: greet\n    language: python\n    run: |\n      name = "{{ state.name }}"\n',
    'lua.yaml': 'name: l\nsettings: { allow_inline_code: false }\nnodes:\n  - name: a\n    language: lua\n    run: "return {}"\n',
    'pl.yaml': 'name: p\nsettings: { allow_inline_code: false }\nnodes:\n  - name: a\n    language: prolog\n    run: "true."\n',
    'js.yaml': 'name: j\nsettings: { allow_inline_code: false }\nnodes:\n  - name: a\n    run: "return {}"\n',
    'action.yaml':
      'name: c\nsettings: { allow_inline_code: false }\nnodes:\n  - name: a\n    uses: python.run\n    with: { code: "{{ state.code }}" }\n',
    'steps.yaml': 'name: s\nsettings: { allow_inline_code: false }\nnodes:\n  - name: a\n    steps:\n      - run: "return { x: 1 }"\n',
    'tool.yaml':
      'name: t\nsettings: { allow_inline_code: false }\nnodes:\n  - name: a\n    uses: reason.react\n    with: { goal: g, tools: [lua.run] }\n',
  }
  const s = scratch(files)
  try {
    for (const f of Object.keys(files)) {
      const r = await tea(['validate', s.path(f)])
      assert.is(r.code, 2, `${f}: ${r.stdout}${r.stderr}`)
      assert.match(`${r.stdout}${r.stderr}`, /INLINE_CODE_FORBIDDEN/, f)
    }
    const run = await tea(['run', s.path('py.yaml'), '--data-dir', s.path('data'), '-i', '{"name": "x"}'])
    assert.is(run.code, 2, run.stderr)
    assert.match(run.stderr, /INLINE_CODE_FORBIDDEN/)
  } finally {
    s.cleanup()
  }
})

test.run()
