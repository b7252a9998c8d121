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

test('group: "file" gives the range of a document indexed under the file\'s own path beside its chunks, at any topK and minScore', async (t) => {
  // big.md is chunked; "alpha" is dense in its first chunk. index('big.md', ...) adds the file's own
  // document (kept beside the chunks until the file is read again), a weak match on its line 7.
  const filler = Array.from({ length: 60 }, (_, i) => `filler ${i}`).join('\n')
  const base = tree(t, { 'big.md': `alpha alpha alpha\n${filler}` })
  const ws = open(base, { chunking: { maxChars: 300, overlapLines: 0 }, fileKinds: false })
  await ws.init()
  const words = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ')
  await ws.index('big.md', `a\nb\nc\nd\ne\nf\nalpha ${words}`)
  const flat = await ws.search('alpha', { topK: 100 })
  assert.ok(flat.some((r) => r.id === 'big.md' && r.lineRange.start === 7), 'the own document matches on line 7')
  const weakest = Math.min(...flat.map((r) => r.score))
  assert.ok(weakest < 0.5, `the own document's hit is the weak one (${weakest})`)
  const expected = [{ start: 1, end: 1 }, { start: 7, end: 7 }]
  for (const options of [{}, { minScore: 0.5 }, { topK: 1 }, { topK: 1, minScore: 0.9 }]) {
    const files = await ws.search('alpha', { group: 'file', ...options })
    assert.deepEqual(files.map((r) => [r.id, r.lineRanges]), [['big.md', expected]], JSON.stringify(options))
  }
  await ws.destroy()
})

test("unindex() of one chunk of a file: its vector goes, and the file's next read writes it again (rebuild, restart after a change)", async (t) => {
  const lines = Array.from({ length: 20 }, (_, i) => `line ${i} alpha bravo charlie delta ${i}`)
  const embed = Object.assign(async (batch) => batch.map((s) => [(s.length % 7) + 1, 1, 0.5]), { batch: true })
  for (const how of ['rebuild', 'restart']) {
    const base = tree(t, { 'docs/big.md': lines.join('\n') })
    const dir = path.join(base, '..', `${path.basename(base)}-persist`)
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
    // (With persist, rebuildSearchIndex() reads only the files changed: a restart after a change reads it.)
    const make = () => open(base, { embedder: embed, chunking: { maxChars: 150, overlapLines: 0 }, persist: how === 'restart' ? { dir } : undefined })
    let ws = make()
    await ws.init()
    const chunks = ws.stats().documents
    assert.ok(chunks >= 4, `chunked (${chunks})`)
    assert.equal(ws.stats().vectors, chunks)
    await ws.unindex('docs/big.md#chunk-1')
    assert.deepEqual([ws.stats().documents, ws.stats().vectors], [chunks - 1, chunks - 1], `${how}: its vector is gone too`)
    if (how === 'rebuild') {
      await ws.rebuildSearchIndex()
    } else {
      await ws.destroy()
      fs.appendFileSync(path.join(base, 'docs/big.md'), '\nline 20 alpha')
      ws = make()
      await ws.init()
    }
    assert.equal(ws.stats().vectors, ws.stats().documents, `${how}: every chunk has its vector again`)
    assert.deepEqual(await idsOf(ws, 'alpha', 'vector'), await idsOf(ws, 'alpha', 'bm25'), how)
    assert.ok((await idsOf(ws, 'alpha', 'vector')).includes('docs/big.md#chunk-1'), how)
    await ws.destroy()
  }
})
