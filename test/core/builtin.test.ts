import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { V8_FLAGS, type V8FlagSwitch, builtin, holdNodeCache, withNodeCache } from '../../src/core/builtin.ts'

// The loader leaves a switch on the global (src/sea/loader.ts); here a fake one records what it was told.
function withSwitch(run: (said: string[]) => void): void {
  const said: string[] = []
  const flags: V8FlagSwitch = { set: (f) => said.push(f), own: ['--own=1'], start: ['--start=1'] }
  const g = globalThis as Record<symbol, unknown>
  g[V8_FLAGS] = flags
  try {
    run(said)
  } finally {
    delete g[V8_FLAGS]
  }
}

test('withNodeCache runs a load with V8 start flags, then puts tea flags back once the outermost load ends', () => {
  withSwitch((said) => {
    const value = withNodeCache(() => {
      assert.equal(said, ['--start=1'])
      return withNodeCache(() => 7)
    })
    assert.is(value, 7)
    // A nested load sets the start flags again (a worker thread's loader may have set tea's meanwhile: the flags
    // are the process's); tea's come back once, at the end.
    assert.equal(said, ['--start=1', '--start=1', '--own=1'])
  })
})

test("holdNodeCache keeps V8's start flags until released, once; loads inside it leave them set", () => {
  withSwitch((said) => {
    const release = holdNodeCache()
    assert.equal(said, ['--start=1'])
    assert.is(
      withNodeCache(() => 'loaded'),
      'loaded',
    )
    assert.equal(said, ['--start=1', '--start=1'], 'a load inside a hold put the executables flags back')
    const other = holdNodeCache()
    release()
    release()
    assert.equal(said, ['--start=1', '--start=1', '--start=1'], 'a hold released twice counted twice')
    other()
    assert.equal(said, ['--start=1', '--start=1', '--start=1', '--own=1'])
  })
})

test('withNodeCache puts tea flags back when the load throws', () => {
  withSwitch((said) => {
    assert.throws(
      () =>
        withNodeCache(() => {
          throw new Error('no such module')
        }),
      /no such module/,
    )
    assert.equal(said, ['--start=1', '--own=1'])
    assert.is(
      withNodeCache(() => 1),
      1,
    )
    assert.equal(said, ['--start=1', '--own=1', '--start=1', '--own=1'])
  })
})

test('without a switch (a plain bundle, tests) a load just runs; builtin() loads through it once, then looks it up', () => {
  assert.is(
    withNodeCache(() => 'as is'),
    'as is',
  )
  withSwitch((said) => {
    // node:module: no other test of this folder loads it through builtin() (the map is per process).
    const mod = builtin('node:module')
    assert.is(typeof mod.createRequire, 'function')
    assert.equal(said, ['--start=1', '--own=1'])
    assert.is(builtin('node:module'), mod)
    assert.equal(said, ['--start=1', '--own=1'], 'a built-in already loaded switched the flags again')
  })
})

test.run()
