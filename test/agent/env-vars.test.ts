/** Issue 10 item 7: `${VAR}` / `${VAR:-default}` in settings, from the environment, loud when unset. */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { formatProblem } from '../../src/agent/problems.ts'
import { buildRegistry } from '../../src/features.ts'

const agent = (settings: string) => `name: env\nsettings:\n${settings}\nnodes:\n  - name: a\n    run: "return {}"\n`
const load = (settings: string, env: NodeJS.ProcessEnv) => loadAgentText(agent(settings), '/tmp/env.yaml', buildRegistry(), { env })

test('10-7 ${VAR} and ${VAR:-default} in settings come from the environment, in nested sections too', () => {
  const { spec, problems } = load(
    '  llm:\n    model: "${MODEL:-ollama:qwen2.5:1.5b}"\n    base_url: "http://${HOST}:11434"\n  shell_providers:\n    local:\n      command: llama-cli\n      args: ["-m", "${MODELS:-/opt/models}/phi.gguf"]',
    { HOST: 'pi.local' },
  )
  assert.equal(problems, [])
  assert.is(spec?.settings.llm.model, 'ollama:qwen2.5:1.5b')
  assert.is(spec?.settings.llm.base_url, 'http://pi.local:11434')
  assert.equal(spec?.settings.llm.shell_providers?.local?.args, ['-m', '/opt/models/phi.gguf'])
  assert.is(load('  llm:\n    model: "${MODEL:-ollama:x}"', { MODEL: 'ollama:y' }).spec?.settings.llm.model, 'ollama:y')
})

test('10-7 an unset variable without a default is a load error naming it and its place; $${VAR} stays literal', () => {
  const { spec, problems } = load('  llm:\n    model: "${TEA_TEST_UNSET_MODEL}"', {})
  assert.is(spec, undefined)
  assert.equal(
    problems.map((p) => formatProblem('env.yaml', p)),
    [
      'env.yaml:4:12: AGENT_INVALID settings.llm.model: environment variable TEA_TEST_UNSET_MODEL is not set (write ${TEA_TEST_UNSET_MODEL:-default} for a default)',
    ],
  )
  assert.is(load('  llm:\n    base_url: "$${LITERAL}"', {}).spec?.settings.llm.base_url, '${LITERAL}')
})

test('10-7 ${…} outside settings is text (templates use {{ … }})', () => {
  const { spec } = loadAgentText(
    'name: t\nnodes:\n  - name: a\n    uses: json.parse\n    with: { text: "${NOT_EXPANDED}" }\n',
    '/tmp/t.yaml',
    buildRegistry(),
    { env: {} },
  )
  assert.equal(spec?.nodes[0]?.with, { text: '${NOT_EXPANDED}' })
})

test.run()
