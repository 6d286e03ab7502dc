/**
 * Issue 29: TEA's code.execute through the built bundle: Python in tea's sandbox with TEA's result shape, and
 * `settings.allow_inline_code: false` refusing the file at `tea validate` and `tea run`.
 */

import { writeFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, tea } from './cli.ts'

const agent = (settings: string) => `name: code
${settings}nodes:
  - name: show
    uses: code.execute
    with:
      language: python
      code: |
        print(f"dimensions: {len(state['embedding'])}")
        result = {"first": state["embedding"][:2]}
    output: summary
`

test('code.execute runs Python in the sandbox and returns TEA’s shape with what it printed', async () => {
  const s = scratch()
  try {
    writeFileSync(s.path('agent.yaml'), agent(''))
    const r = await tea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '-q', '-i', '{"embedding": [0.5, 0.25, 1]}'])
    assert.is(r.code, 0, r.stderr)
    const summary = JSON.parse(r.stdout).summary
    assert.is(summary.success, true)
    assert.equal(summary.return_value, { first: [0.5, 0.25] })
    assert.is(summary.stdout, 'dimensions: 3\n')
    assert.is(summary.error, null)
  } finally {
    s.cleanup()
  }
})

test('allow_inline_code: false refuses a file with code.execute at validate and at run', async () => {
  const s = scratch()
  try {
    writeFileSync(s.path('agent.yaml'), agent('settings:\n  allow_inline_code: false\n'))
    const checked = await tea(['validate', s.path('agent.yaml')])
    assert.is(checked.code, 2, checked.stdout + checked.stderr)
    assert.match(checked.stdout + checked.stderr, 'INLINE_CODE_FORBIDDEN')
    assert.match(checked.stdout + checked.stderr, 'code.execute runs code')
    const ran = await tea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '-q', '-i', '{"embedding": [1]}'])
    assert.is.not(ran.code, 0)
    assert.match(ran.stderr, 'INLINE_CODE_FORBIDDEN')
  } finally {
    s.cleanup()
  }
})

test.run()
