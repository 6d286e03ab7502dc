/**
 * Issue 29 (templates): TEA's rule for a key missing from a dict, `TemplateLimits.missingIsNone`. TEA renders with
 * a DotDict whose missing attributes are None (python/src/the_edge_agent/yaml_templates.py), so
 * `{{ state.reply.edge_cases | tojson }}` gives `null` there; tea's own rule makes it an error.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { compileTemplate } from '../../src/template/index.ts'
import { throwsCode } from './helpers.ts'

const scope = { state: { reply: { content: 'x' }, xs: [1, 2] }, variables: {} }
const tea = (src: string) => compileTemplate(src, { node: 'n', field: 'with.prompt' }, { missingIsNone: true }).render(scope)
const strict = (src: string) => compileTemplate(src, { node: 'n', field: 'with.prompt' }).render(scope)

test('yaml_templates.py DotDict: a missing key of a dict reads as none, natively and in text', () => {
  assert.is(tea('{{ state.reply.edge_cases }}'), null)
  assert.is(tea('{{ state.missing }}'), null)
  assert.is(tea("{{ state['missing'] }}"), null)
  assert.is(tea('cases: {{ state.reply.edge_cases | tojson }}'), 'cases: null')
  assert.is(tea('[{{ state.missing }}]'), '[]')
})

test("tea's own rule is unchanged without the option: the same templates fail", () => {
  throwsCode(() => strict('{{ state.reply.edge_cases }}'), 'TEMPLATE_ERROR', "'state.reply.edge_cases' is undefined")
  throwsCode(() => strict('cases: {{ state.reply.edge_cases | tojson }}'), 'TEMPLATE_ERROR', "input of filter 'tojson'")
})

test('with the option, default and is defined still see the key as missing', () => {
  assert.is(tea("{{ state.missing | default('d') }}"), 'd')
  assert.is(tea('{{ state.missing is defined }}'), false)
  assert.is(tea("{{ state.missing.deeper | default('d') }}"), 'd')
})

test('with the option, reading through none and a list index out of range still fail, as in TEA', () => {
  throwsCode(() => tea('{{ state.missing.deeper }}'), 'TEMPLATE_ERROR', "'state.missing' is none (reading 'deeper')")
  throwsCode(() => tea('{{ state.xs[5] }}'), 'TEMPLATE_ERROR', "'state.xs[5]' is undefined")
  throwsCode(() => tea('{{ nothing_here }}'), 'TEMPLATE_ERROR', "'nothing_here' is undefined")
})

test.run()
