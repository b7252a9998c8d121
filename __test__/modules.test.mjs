// crates/core's top-level modules form no cycle (scripts/module-graph.mjs
// reads the `crate::` paths of their shipping code); the check itself
// finds a cycle when there is one.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { moduleGraph, cycles } from '../scripts/module-graph.mjs'

test("crates/core's modules depend on each other without a cycle; the leaf and the layers are where docs/architecture.md says", () => {
  const graph = moduleGraph()
  assert.ok(graph.size >= 10, 'the modules were found')
  const found = cycles(graph)
  assert.deepEqual(found, [], found.map((c) => c.join(' -> ')).join('\n'))
  assert.deepEqual([...graph.get('bytes').keys()], [], 'bytes is a leaf')
  for (const low of ['bytes', 'text', 'analysis', 'index']) {
    for (const high of ['ingest', 'scoring', 'vectors', 'search', 'persist']) {
      assert.ok(!graph.get(low).has(high), `${low} does not reach up to ${high}`)
    }
  }
})

test('the cycle check finds a cycle', () => {
  const g = new Map([
    ['a', new Map([['b', 'a.rs']])],
    ['b', new Map([['c', 'b.rs']])],
    ['c', new Map([['a', 'c.rs']])],
    ['d', new Map([['a', 'd.rs']])],
  ])
  assert.deepEqual(cycles(g), [['a', 'b', 'c', 'a']])
})
