import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage, isTeaError, TeaError } from '../../src/core/errors.ts'
import { deserializeError, serializeError } from '../../src/pool/protocol.ts'

test('a TeaError keeps its code, place, issues and details through the trip to a worker thread and back', () => {
  const e = new TeaError('CODE_ERROR', 'run: code threw: nope', {
    where: { subtask: 'B' },
    issues: [{ message: 'x', path: ['a', 0] }],
    details: { k: 1 },
  })
  const back = deserializeError(structuredClone(serializeError(e)))
  assert.ok(isTeaError(back, 'CODE_ERROR'))
  assert.equal([back.where, back.issues, back.details], [{ subtask: 'B' }, [{ message: 'x', path: ['a', 0] }], { k: 1 }])
  assert.is(errorMessage(back), 'subtask B: run: code threw: nope:\n  a.0: x')
})

test('an error that is not a TeaError comes back as a plain Error with its name and message', () => {
  const back = deserializeError(structuredClone(serializeError(new RangeError('bad input'))))
  assert.not.ok(isTeaError(back))
  assert.equal([back.name, back.message], ['RangeError', 'bad input'])
})

test.run()
