// The first k results of a search do not depend on topK (or on minScore for a
// file's ranges): found by a randomised metamorphic hunt (topK k against a
// deep topK, grouped against folded, pruned against a reference BM25).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Workspace, LocalFilesystem, tree } from './helpers.mjs'

test('vector mode keeps the store\'s order below a cosine of 0: the less similar of two negative cosines comes second, at every topK (both clamped to 0, they were ordered by id)', async () => {
  const vectors = { query: [1, 0], 'doc a': [-1, 0.1], 'doc b': [-0.1, 1] }
  const ws = new Workspace({ bm25: true, embedder: Object.assign(async (texts) => texts.map((t) => vectors[t]), { batch: true }) })
  await ws.init()
  await ws.indexMany([{ path: 'a', content: 'doc a' }, { path: 'b', content: 'doc b' }])
  const first = await ws.search('query', { topK: 1, mode: 'vector' })
  const both = await ws.search('query', { topK: 10, mode: 'vector' })
  assert.deepEqual(first.map((r) => r.id), ['b'])
  assert.deepEqual(both.map((r) => r.id), ['b', 'a'])
  assert.deepEqual(both.map((r) => r.score), [0, 0], 'scores stay clamped to [0, 1]')
  assert.ok(both[0].scoreDetails.vector > both[1].scoreDetails.vector)
  const rrf = await ws.search('query', { topK: 10, mode: 'hybrid', fusion: 'rrf', vectorWeight: 1 })
  assert.deepEqual(rrf.map((r) => r.id), ['b', 'a'], 'the vector half\'s ranks follow the store too')
  await ws.destroy()
})

test('group: \'file\' in vector and hybrid mode fills topK files when one file\'s chunks fill the first hits (it returned that file alone)', async (t) => {
  const files = { 'src/big.txt': Array.from({ length: 3000 }, (_, i) => `heron heron nest line ${i} heron`).join('\n') }
  for (let i = 0; i < 6; i++) files[`src/small${i}.txt`] = `a heron once flew over file ${i} with many other words here and there to make it long`
  const dir = tree(t, files)
  const embed = (text) => { const v = new Array(8).fill(0.01); for (const w of text.split(/\W+/)) if (w) v[w.length % 8] += 1; return v }
  const ws = new Workspace({
    filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['src'],
    chunking: { maxChars: 200, overlapLines: 0 }, fileKinds: false, gitHistory: false,
    embedder: Object.assign(async (texts) => texts.map(embed), { batch: true }),
  })
  const report = await ws.init()
  assert.ok(report.chunks >= 400, 'the big file is hundreds of chunks')
  for (const mode of ['bm25', 'vector', 'hybrid']) {
    const results = await ws.search('heron 7', { topK: 5, mode, group: 'file' })
    assert.equal(results.length, 5, mode)
    assert.equal(new Set(results.map((r) => r.id)).size, 5, `${mode}: each file once`)
  }
  const all = await ws.search('heron', { topK: 20, mode: 'vector', group: 'file' })
  assert.equal(all.length, 7, 'every file, when fewer match than topK')
  await ws.destroy()
})

test('group: \'file\' with minScore lists every matching chunk\'s range at any topK (70 ranges at topK 1, 60 at topK 20)', async (t) => {
  const pad = ['filler text a b c', 'filler text d e f', 'x y z', 'more filler words here', 'and some more filler words']
  const lines = []
  for (let i = 0; i < 60; i++) lines.push(`heron heron heron heron nest ${i}`, ...pad)
  for (let i = 0; i < 10; i++) lines.push(`one heron among many many words that pad this line out ${i}`, ...pad)
  const dir = tree(t, { 'src/big.txt': lines.join('\n') })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['src'], chunking: { maxChars: 120, overlapLines: 0 }, fileKinds: false, gitHistory: false })
  await ws.init()
  const counts = []
  for (const minScore of [undefined, 0.9]) {
    for (const topK of [1, 20]) {
      const [file] = await ws.search('heron', { topK, group: 'file', minScore })
      counts.push(file.lineRanges.length)
    }
  }
  assert.deepEqual(counts, [70, 70, 70, 70])
  await ws.destroy()
})

/** A Mastra-shaped vector store in memory (cosine, brute force) that refuses a topK past 10,000, as Pinecone does. */
function cappedStore() {
  const rows = new Map()
  const asked = []
  const cos = (a, b) => { let d = 0, na = 0, nb = 0; for (let i = 0; i < a.length; i++) { d += a[i] * b[i]; na += a[i] ** 2; nb += b[i] ** 2 } return d / Math.sqrt(na * nb) }
  return {
    asked,
    async createIndex() {},
    async upsert({ vectors, metadata, ids }) { ids.forEach((id, i) => rows.set(id, { vector: vectors[i], metadata: metadata[i] })) },
    async query({ queryVector, topK }) {
      asked.push(topK)
      if (topK > 10_000) throw new Error(`topK ${topK} > 10000`)
      return [...rows].map(([id, r]) => ({ id, score: cos(queryVector, r.vector), metadata: r.metadata })).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, topK)
    },
    async deleteVectors({ ids }) { for (const id of ids ?? []) rows.delete(id) },
    async deleteVector({ id }) { rows.delete(id) },
  }
}

test('group: \'file\' in vector and hybrid mode asks a store for at most 10,000 hits, and stops once every file written is found (it asked 12,800 and 25,600, failing on a store capped at 10,000)', async (t) => {
  const files = { 'src/big.txt': Array.from({ length: 12_000 }, (_, i) => `heron ${i}`).join('\n') }
  for (let i = 0; i < 2; i++) files[`src/small${i}.txt`] = `a heron once flew over file ${i} with many other words`
  const dir = tree(t, files)
  // The big file's chunks (`heron 123`) point one way, every other text another.
  const embed = (text) => (/^heron \d+$/.test(text.trim()) ? [1, 0.1, 0] : [0.2, 1, 0])
  const store = cappedStore()
  const ws = new Workspace({
    filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['src'], vectorStore: store,
    chunking: { maxChars: 12, overlapLines: 0 }, fileKinds: false, gitHistory: false,
    embedder: Object.assign(async (texts) => texts.map(embed), { batch: true, maxBatchSize: 2048 }),
  })
  await ws.init()
  for (const mode of ['vector', 'hybrid']) {
    store.asked.length = 0
    const results = await ws.search('heron 7', { topK: 5, mode, group: 'file' })
    assert.ok(results.length >= 1 && results[0].id === 'src/big.txt', mode)
    assert.ok(Math.max(...store.asked) <= 10_000, `${mode}: asked ${store.asked}`)
  }
  // Three files written: found at the first depth that holds them all, not asked deeper.
  store.asked.length = 0
  const few = await ws.search('a heron once flew over file with many words', { topK: 20, mode: 'vector', group: 'file' })
  assert.deepEqual(few.map((r) => r.id).sort(), ['src/big.txt', 'src/small0.txt', 'src/small1.txt'])
  assert.deepEqual(store.asked, [80], 'one ask: every file written is among its hits')
  await ws.destroy()
})
