// Concurrent calls from Promise.all are safe and end in a consistent index.
import test from 'node:test'
import assert from 'node:assert/strict'
import { Workspace, tree, bm25Workspace, ids } from './helpers.mjs'

test('200 concurrent index() and search() calls: last write wins, every search sees a consistent index', async () => {
  // Mastra's tokenization keeps `version3` one token.
  const ws = new Workspace({ bm25: { tokenize: { preset: 'mastra' } } })
  const calls = []
  for (let i = 0; i < 200; i++) {
    if (i % 2 === 0) {
      const doc = (i / 2) % 20
      const version = Math.floor(i / 40)
      calls.push(ws.index(`doc${doc}`, `shared version${version} body${doc}`, { metadata: { version } }))
    } else {
      calls.push(ws.search('shared', { topK: 20 }))
    }
  }
  const outcomes = await Promise.all(calls)
  for (const out of outcomes.filter(Array.isArray)) {
    assert.ok(out.length <= 20)
    assert.equal(new Set(ids(out)).size, out.length)
    for (const r of out) {
      assert.match(r.id, /^doc\d+$/)
      assert.ok(r.score > 0 && r.score <= 1)
      // Content and metadata belong to the same write.
      assert.equal(r.content.split(' ')[1], `version${r.metadata.version}`)
    }
  }
  assert.equal(ws.stats().documents, 20)
  // Calls landed in call order: every document is at its last version (4).
  const final = await ws.search('shared', { topK: 50 })
  assert.equal(final.length, 20)
  for (const r of final) assert.equal(r.metadata.version, 4)
  assert.deepEqual(await ws.search('version3'), [])

  // The same documents indexed one by one give the same ranking.
  const sequential = new Workspace({ bm25: { tokenize: { preset: 'mastra' } } })
  for (let d = 0; d < 20; d++) await sequential.index(`doc${d}`, `shared version4 body${d}`, { metadata: { version: 4 } })
  assert.deepEqual(await ws.search('body7 shared', { topK: 20 }), await sequential.search('body7 shared', { topK: 20 }))
})

test('concurrent indexMany, unindex, clear and search keep their call order', async () => {
  const ws = new Workspace({ bm25: true })
  await Promise.all([
    ws.indexMany(Array.from({ length: 50 }, (_, i) => ({ path: `m${i}`, content: `many doc ${i}` }))),
    ws.search('many'),
    ws.unindex('m3'),
    ws.index('m4', 'replaced'),
    ws.search('doc'),
  ])
  assert.equal(ws.stats().documents, 49)
  assert.ok(!ids(await ws.search('many', { topK: 100 })).includes('m3'))
  await Promise.all([ws.index('x', 'before clear'), ws.clear(), ws.index('y', 'after clear')])
  assert.deepEqual(ids(await ws.search('clear', { topK: 10 })), ['y'])
})

test('searches during init() see the old or the new index, never a partial one', async (t) => {
  const files = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`d/f${i}.md`, `term${i % 7} common`]))
  const dir = tree(t, files)
  const ws = bm25Workspace(dir, { autoIndexPaths: ['d'] })
  await ws.init()
  const results = await Promise.all([ws.rebuildSearchIndex(), ...Array.from({ length: 50 }, () => ws.search('common', { topK: 1000 }))])
  for (const r of results.slice(1)) assert.equal(r.length, 400)
})
