import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { bundledWorkerFile } from '../../src/sea/worker-file.ts'

test('from source there is no bundled worker file: the pool uses its own module', () => {
  assert.is(bundledWorkerFile(), undefined)
})

test.run()
