import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage, isTeaError } from '../../src/core/errors.ts'
import { assertDag, dagIssues, readyWaves, topologicalOrder, transitiveDependents } from '../../src/planning/dag.ts'
import { countStatuses, newSubtask } from '../../src/planning/types.ts'
import { thrown } from '../support/expect.ts'
import { rng } from '../support/rng.ts'

const n = (id: string, ...dependencies: string[]) => ({ id, dependencies })

test('001.3R-UNIT-001 a plan of valid subtasks validates, with statuses pending and counts by status', () => {
  const subtasks = [
    newSubtask({ id: 'a', description: 'first', dependencies: [] }),
    newSubtask({ id: 'b', description: 'second', dependencies: ['a'] }),
  ]
  assert.equal(dagIssues(subtasks), [])
  assertDag(subtasks)
  assert.equal(
    subtasks.map((s) => s.status),
    ['pending', 'pending'],
  )
  assert.equal(countStatuses(subtasks), { completed: 0, failed: 0, skipped: 0, pending: 2, in_progress: 0, total: 2 })
})

test('001.3R-UNIT-002 an empty subtask list is rejected as PLAN_INVALID', () => {
  const e = thrown(() => assertDag([]))
  assert.ok(isTeaError(e, 'PLAN_INVALID'))
  assert.match(errorMessage(e), /no subtasks/)
})

test('001.3R-UNIT-003 dependencies must reference existing ids; duplicates and unknowns are all reported at once', () => {
  const issues = dagIssues([n('a'), n('a'), n('b', 'zz'), n('c', 'yy')])
  assert.equal(
    issues.map((i) => [i.code, i.where?.subtask]),
    [
      ['duplicate', 'a'],
      ['unknown_dependency', 'b'],
      ['unknown_dependency', 'c'],
    ],
  )
  assert.equal(
    issues.map((i) => i.received),
    [undefined, 'zz', 'yy'],
  )
  const e = thrown(() => assertDag([n('a'), n('b', 'zz')], 'revised plan'))
  assert.ok(isTeaError(e, 'PLAN_INVALID'))
  assert.is((e as Error).message, 'invalid revised plan')
  assert.is(errorMessage(e), "invalid revised plan:\n  subtask b: depends on 'zz', which is not in the plan (known: a, b)")
})

test('001.3R-UNIT-004 detects a direct cycle and names it A → B → A', () => {
  const e = thrown(() => assertDag([n('A', 'B'), n('B', 'A')]))
  assert.ok(isTeaError(e, 'PLAN_CYCLE'))
  assert.match(errorMessage(e), 'A → B → A')
})

test('001.3R-UNIT-005 detects an indirect cycle and names it A → B → C → A', () => {
  const e = thrown(() => assertDag([n('A', 'B'), n('B', 'C'), n('C', 'A'), n('D')]))
  assert.ok(isTeaError(e, 'PLAN_CYCLE'))
  assert.match(errorMessage(e), 'A → B → C → A')
  assert.equal(dagIssues([n('A', 'B'), n('B', 'C'), n('C', 'A')]).length, 1)
})

test('001.3R-UNIT-006 detects a subtask depending on itself', () => {
  const issues = dagIssues([n('A', 'A'), n('B', 'A')])
  assert.equal(issues, [{ code: 'self_reference', message: 'depends on itself', where: { subtask: 'A' } }])
  assert.ok(
    isTeaError(
      thrown(() => assertDag([n('A', 'A')])),
      'PLAN_INVALID',
    ),
  )
})

test('001.3R-UNIT-007 topological order puts A first, B and C before D, and is the same every time', () => {
  const plan = [n('A'), n('B', 'A'), n('C', 'A'), n('D', 'B', 'C')]
  const order = topologicalOrder(plan)
  assert.equal(order, ['A', 'B', 'C', 'D'])
  for (let i = 0; i < 5; i++) assert.equal(topologicalOrder(plan), order)
  assert.equal(readyWaves(plan), [['A'], ['B', 'C'], ['D']])
})

test('001.3R-UNIT-008 when several orders are valid, ties follow declaration order', () => {
  assert.equal(topologicalOrder([n('z'), n('y'), n('x', 'y'), n('w')]), ['z', 'y', 'w', 'x'])
  assert.equal(topologicalOrder([n('c', 'a'), n('b'), n('a')]), ['b', 'a', 'c'])
  assert.equal(readyWaves([n('c', 'a'), n('b'), n('a')]), [['b', 'a'], ['c']])
})

test('topological order of a cyclic plan throws instead of dropping subtasks', () => {
  assert.ok(
    isTeaError(
      thrown(() => topologicalOrder([n('A', 'B'), n('B', 'A'), n('C')])),
      'PLAN_CYCLE',
    ),
  )
})

test('transitive dependents are found through chains and diamonds, in declaration order', () => {
  const plan = [n('A'), n('B', 'A'), n('C', 'B'), n('D'), n('E', 'D', 'C')]
  assert.equal(transitiveDependents(plan, 'A'), ['B', 'C', 'E'])
  assert.equal(transitiveDependents(plan, 'D'), ['E'])
  assert.equal(transitiveDependents(plan, 'E'), [])
})

test('a 10,000-subtask chain orders and finds dependents without blowing the stack', () => {
  const chain = Array.from({ length: 10_000 }, (_, i) => n(String(i), ...(i > 0 ? [String(i - 1)] : [])))
  chain.reverse()
  assert.equal(dagIssues(chain), [])
  const order = topologicalOrder(chain)
  assert.equal(order[0], '0')
  assert.equal(order[9_999], '9999')
  assert.equal(transitiveDependents(chain, '0').length, 9_999)
})

test('assertDag passes exactly the plans dagIssues finds nothing in (its fast check, 20,000 random graphs with every kind of fault)', () => {
  const r = rng(20261129)
  const pick = (k: number) => Math.floor(r() * k)
  const seen = { valid: 0, invalid: 0 }
  for (let g = 0; g < 20_000; g++) {
    const size = pick(9)
    // Dependencies on earlier subtasks only (a DAG), then a fault of one kind in some of the graphs.
    const nodes = Array.from({ length: size }, (_, i) =>
      n(`s${i}`, ...Array.from({ length: pick(3) }, () => `s${pick(Math.max(i, 1))}`).filter((d) => d !== `s${i}`)),
    )
    const fault = pick(8)
    const at = nodes[pick(size)]
    if (at && fault === 0) at.dependencies.push(`s${pick(size)}`) // a back edge: maybe a cycle, maybe a self-reference
    if (at && fault === 1) at.dependencies.push('missing')
    if (at && fault === 2) nodes.push(n(at.id))
    if (at && fault === 3) at.dependencies.push(at.dependencies[0] ?? 's0') // a dependency twice: still valid
    const valid = dagIssues(nodes).length === 0
    seen[valid ? 'valid' : 'invalid']++
    let error: unknown
    try {
      assertDag(nodes)
    } catch (e) {
      error = e
    }
    assert.is(error === undefined, valid, JSON.stringify(nodes))
    if (!valid) assert.ok(isTeaError(error, 'PLAN_INVALID') || isTeaError(error, 'PLAN_CYCLE'))
  }
  assert.ok(seen.valid > 5_000 && seen.invalid > 2_000, JSON.stringify(seen))
})

test.run()
