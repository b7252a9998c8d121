// A document given to index() under a file's chunk id (`big.md#chunk-1`):
// the file's other chunks and the document's vector stay each other's
// neither when the file changes (with persist, with watch) nor when one of
// them is removed. Found by a randomised differential against a fresh
// workspace built from the same final state.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { tree, eventually, Workspace, LocalFilesystem } from './helpers.mjs'

const embedder = Object.assign(async (texts) => texts.map((t) => [(t.length % 5) + 1, 1, 0.5]), { batch: true })
const LINES = Array.from({ length: 40 }, (_, i) => `alpha line ${i}`).join('\n')
const open = (base, extra = {}) =>
  new Workspace({ id: 'w', filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['.'], chunking: { maxChars: 100 }, gitHistory: false, ...extra })
const idsOf = async (ws, q, mode = 'bm25') => (await ws.search(q, { mode, topK: 100 })).map((r) => r.id).sort()

test("a file whose chunk id index() took: when the file shrinks or goes, its old chunks go too (rebuild, restart, watch)", async (t) => {
  for (const how of ['rebuild', 'restart', 'watch', 'deleted', 'a gap']) {
    const base = tree(t, { 'big.md': LINES })
    const dir = path.join(tree(t, {}), 'p')
    const extra = how === 'watch' ? { watch: true } : { persist: { dir } }
    let ws = open(base, extra)
    await ws.init()
    assert.ok(ws.stats().documents > 5, how)
    await ws.index('big.md#chunk-1', 'user text')
    if (how === 'a gap') {
      // Taken, then removed: the file's chunks have a gap there.
      await ws.unindex('big.md#chunk-1')
      await ws.index('user', 'user text')
    }
    if (how === 'deleted') fs.rmSync(path.join(base, 'big.md'))
    else fs.writeFileSync(path.join(base, 'big.md'), 'alpha now small')
    if (how === 'rebuild') await ws.rebuildSearchIndex()
    if (how === 'restart' || how === 'deleted' || how === 'a gap') {
      await ws.destroy()
      ws = open(base, extra)
      await ws.init()
    }
    const want = how === 'deleted' ? ['big.md#chunk-1'] : how === 'a gap' ? ['big.md', 'user'] : ['big.md', 'big.md#chunk-1']
    await eventually(how, async () => JSON.stringify(await idsOf(ws, 'alpha user')) === JSON.stringify(want))
    assert.equal(ws.stats().documents, want.length, how)
    await ws.destroy()
  }
})

test('a document given to index() under a file chunk id keeps its own vector: the file removed, the same text indexed again is written', async (t) => {
  const base = tree(t, { 'big.md': LINES })
  const ws = open(base, { embedder, persist: { dir: path.join(tree(t, {}), 'p') } })
  await ws.init()
  const opts = { metadata: { sourceFile: 'big.md' } }
  await ws.index('big.md#chunk-1', 'user text', opts)
  assert.equal(ws.stats().vectors, ws.stats().documents, 'one vector per document')
  fs.writeFileSync(path.join(base, 'big.md'), 'alpha now small')
  await ws.rebuildSearchIndex()
  await ws.unindex('big.md')
  await ws.index('big.md#chunk-1', 'user text', opts)
  assert.deepEqual(await idsOf(ws, 'user text', 'vector'), await idsOf(ws, 'user text'))
  assert.deepEqual([ws.stats().documents, ws.stats().vectors], [1, 1])
  await ws.destroy()
})

test('unindex(path) removes from the embedded store the vector of a document that names path as its file', async () => {
  const ws = new Workspace({ bm25: true, embedder })
  await ws.index('a.md#chunk-0', 'alpha beta', { metadata: { sourceFile: 'a.md' } })
  assert.equal(await ws.unindex('a.md'), true)
  assert.deepEqual([ws.stats().documents, ws.stats().vectors], [0, 0])
  for (const mode of ['bm25', 'vector', 'hybrid']) assert.deepEqual(await idsOf(ws, 'alpha', mode), [], mode)
  await ws.destroy()
})

test('a file whose first chunk ids index() took or unindex() removed: unindex(file), a change or its removal takes all its other chunks, and group: "file" gives every range (the walk stopped at the first gap)', async (t) => {
  // One chunk per line, the query's word in chunks 2 and 5.
  const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot']
  const lines = words.map((w, i) => `${w} ${'pad '.repeat(20)}${i === 2 || i === 5 ? ' needle' : ''}`)
  const base = tree(t, { 'big.md': lines.join('\n') })
  const make = (extra = {}) => open(base, { chunking: { maxChars: 120, overlapLines: 0 }, fileKinds: false, ...extra })
  const found = async (ws) => (await ws.search('needle echo delta', { topK: 20 })).map((r) => r.id).sort()

  let ws = make()
  await ws.init()
  const all = await found(ws)
  assert.deepEqual(all, ['big.md#chunk-2', 'big.md#chunk-3', 'big.md#chunk-4', 'big.md#chunk-5'])
  await ws.unindex('big.md#chunk-0')
  const file = await ws.search('needle', { group: 'file' })
  assert.deepEqual(file.map((r) => [r.id, r.lineRanges]), [['big.md', [{ start: 3, end: 3 }, { start: 6, end: 6 }]]])
  await ws.index('big.md#chunk-1', 'user text one')
  assert.equal(await ws.unindex('big.md'), true)
  assert.deepEqual(await found(ws), [])
  assert.deepEqual((await ws.search('user', { topK: 5 })).map((r) => r.id), ['big.md#chunk-1'], "the user's own stays")
  await ws.destroy()

  for (const how of ['watch: removed', 'watch: shrunk']) {
    fs.writeFileSync(path.join(base, 'big.md'), lines.join('\n'))
    ws = make({ watch: true })
    await ws.init()
    await ws.unindex('big.md#chunk-0')
    await ws.index('big.md#chunk-1', 'user text one')
    if (how === 'watch: removed') fs.rmSync(path.join(base, 'big.md'))
    else fs.writeFileSync(path.join(base, 'big.md'), 'small now')
    await eventually(how, async () => (await found(ws)).length === 0)
    assert.equal(ws.stats().documents, how === 'watch: removed' ? 1 : 2, how)
    await ws.destroy()
  }
})
