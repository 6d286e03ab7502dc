/**
 * Issue 33: a cassette holds embeddings too. Recording writes one embed line per call; replay answers text by text,
 * so a run that batches differently from the recording still finds every text; a text it lacks is CASSETTE_MISS.
 */

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createLlmClient } from '../../src/llm/client.ts'
import { rejects } from '../support/expect.ts'
import { fakeEmbedding, startFakeModelServer } from '../support/fake-model-server.ts'
import { tempDir } from '../support/temp-dir.ts'

test('embeddings recorded through the real client replay with the server closed, batched differently', async () => {
  const path = join(tempDir('tea-cassette-embed-'), 'c.jsonl')
  const server = await startFakeModelServer()
  const recorder = createLlmClient({ env: { OLLAMA_HOST: server.url }, record: path })
  const recorded = await recorder.embed!({ model: 'ollama:nomic-embed-text', input: ['pump seal', 'boiler'] })
  await recorder.close()
  await server.close()
  assert.equal(recorded.embeddings, [fakeEmbedding('pump seal'), fakeEmbedding('boiler')])
  const line = JSON.parse(readFileSync(path, 'utf8').trim())
  assert.equal(line, { embed: { model: 'ollama:nomic-embed-text', input: ['pump seal', 'boiler'], embeddings: recorded.embeddings } })

  const replayer = createLlmClient({ env: {}, replay: path })
  const one = await replayer.embed!({ model: 'ollama:nomic-embed-text', input: ['boiler'] })
  assert.equal(one, { embeddings: [fakeEmbedding('boiler')], model: 'ollama:nomic-embed-text' })
  await rejects(
    () => replayer.embed!({ model: 'ollama:nomic-embed-text', input: ['boiler', 'never recorded'] }),
    'CASSETTE_MISS',
    'never recorded',
  )
  await rejects(() => replayer.embed!({ model: 'ollama:other', input: ['boiler'] }), 'CASSETTE_MISS', 'other')
  await replayer.close()
})

test.run()
