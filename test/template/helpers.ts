import { compileTemplate } from '../../src/template/index.ts'

export const SCOPE: Record<string, unknown> = {
  state: {
    name: 'Ann',
    n: 5,
    pi: 3.14159,
    flag: true,
    off: false,
    nothing: null,
    empty: '',
    xs: [1, 2, 3],
    words: ['a', 'b', 'c'],
    d: { a: 1, b: 2 },
    deep: { list: [{ v: 'first' }, { v: 'second' }] },
    json: '{"k": [1, 2], "s": "x"}',
  },
  variables: { greeting: 'hi' },
  result: { ok: true, status: 'ok', text: 'done' },
}

/** Compiles and renders `src` against `scope` (SCOPE by default). */
export function render(src: string, scope: Record<string, unknown> = SCOPE): unknown {
  return compileTemplate(src, { node: 'n1', field: 'with.prompt' }).render(scope)
}

export { throwsCode } from '../support/expect.ts'
