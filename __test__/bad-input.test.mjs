// Every bad input gets an Error naming the option, and leaves the index as
// it was. `undefined` counts as not given.
import test from 'node:test'
import assert from 'node:assert/strict'
import { Workspace, LocalFilesystem, lib } from './helpers.mjs'

async function seeded() {
  const ws = new Workspace({ bm25: true })
  await ws.index('a', 'alpha beta', { metadata: { k: 1 } })
  await ws.index('b', 'beta gamma')
  return ws
}

async function snapshot(ws) {
  const { memoryBytes, ...stats } = ws.stats()
  return { stats, results: await ws.search('alpha beta gamma', { topK: 10 }) }
}

const BAD_CALLS = [
  // search()
  ['query', (ws) => ws.search(5)],
  ['query', (ws) => ws.search(null)],
  ['query', (ws) => ws.search(undefined)],
  ['query', (ws) => ws.search(['alpha'])],
  ['search options', (ws) => ws.search('alpha', 'fast')],
  ['topK', (ws) => ws.search('alpha', { topK: -1 })],
  ['topK', (ws) => ws.search('alpha', { topK: 1.5 })],
  ['topK', (ws) => ws.search('alpha', { topK: NaN })],
  ['topK', (ws) => ws.search('alpha', { topK: Infinity })],
  ['topK', (ws) => ws.search('alpha', { topK: '5' })],
  ['topK', (ws) => ws.search('alpha', { topK: null })],
  ['minScore', (ws) => ws.search('alpha', { minScore: -0.1 })],
  ['minScore', (ws) => ws.search('alpha', { minScore: 1.5 })],
  ['minScore', (ws) => ws.search('alpha', { minScore: NaN })],
  ['minScore', (ws) => ws.search('alpha', { minScore: '0.5' })],
  ['vectorWeight', (ws) => ws.search('alpha', { vectorWeight: 2 })],
  ['vectorWeight', (ws) => ws.search('alpha', { vectorWeight: -Infinity })],
  ['mode', (ws) => ws.search('alpha', { mode: 'semantic' })],
  ['mode', (ws) => ws.search('alpha', { mode: 1 })],
  ['fusion', (ws) => ws.search('alpha', { fusion: 'max' })],
  ['filter', (ws) => ws.search('alpha', { filter: 'k=1' })],
  ['filter', (ws) => ws.search('alpha', { filter: [] })],
  ['filter', (ws) => ws.search('alpha', { filter: { k: { $regex: '1' } } })],
  ['filter', (ws) => ws.search('alpha', { filter: { $and: { k: 1 } } })],
  ['topk', (ws) => ws.search('alpha', { topk: 3 })],
  // index()
  ['path', (ws) => ws.index('', 'x')],
  ['path', (ws) => ws.index(5, 'x')],
  ['path', (ws) => ws.index(undefined, 'x')],
  ['path', (ws) => ws.index(null, 'x')],
  ['content', (ws) => ws.index('a', 5)],
  ['content', (ws) => ws.index('a', undefined)],
  ['content', (ws) => ws.index('a', { text: 'x' })],
  ['index() options', (ws) => ws.index('a', 'x', 'meta')],
  ['metadata', (ws) => ws.index('a', 'x', { metadata: 'k' })],
  ['metadata', (ws) => ws.index('a', 'x', { metadata: [1, 2] })],
  ['metadata', (ws) => ws.index('a', 'x', { metadata: null })],
  ['startLineOffset', (ws) => ws.index('a', 'x', { startLineOffset: 0 })],
  ['startLineOffset', (ws) => ws.index('a', 'x', { startLineOffset: 2.5 })],
  ['type', (ws) => ws.index('a', 'x', { type: 'video' })],
  ['mimeType', (ws) => ws.index('a', 'x', { mimeType: 5 })],
  ['metdata', (ws) => ws.index('a', 'x', { metdata: { k: 2 } })],
  // indexMany()
  ['docs', (ws) => ws.indexMany('a')],
  ['docs', (ws) => ws.indexMany(null)],
  ['docs[0]', (ws) => ws.indexMany([5])],
  ['docs[1].content', (ws) => ws.indexMany([{ path: 'a', content: 'new' }, { path: 'c' }])],
  ['docs[0].path', (ws) => ws.indexMany([{ content: 'x' }])],
  ['docs[0].path', (ws) => ws.indexMany([{ path: '', content: 'x' }])],
  ['docs[0].metadata', (ws) => ws.indexMany([{ path: 'a', content: 'x', metadata: 3 }])],
  ['extra', (ws) => ws.indexMany([{ path: 'a', content: 'x', extra: 1 }])],
  // unindex(), rebuildSearchIndex()
  ['path', (ws) => ws.unindex(5)],
  ['path', (ws) => ws.unindex('')],
  ['paths', (ws) => ws.rebuildSearchIndex('docs')],
  ['paths[1]', (ws) => ws.rebuildSearchIndex(['docs', 7])],
]

test('bad calls reject with an Error that names the option, and change nothing', async () => {
  const ws = await seeded()
  const before = await snapshot(ws)
  for (const [option, call] of BAD_CALLS) {
    let promise
    assert.doesNotThrow(() => {
      promise = call(ws)
    }, `${option}: must reject, not throw`)
    await assert.rejects(promise, (err) => {
      assert.ok(err instanceof Error, `${option}: ${err}`)
      assert.ok(err.message.includes(option), `${option}: message "${err.message}"`)
      return true
    })
    assert.deepEqual(await snapshot(ws), before, `index changed by bad ${option}`)
  }
})

test('type errors are TypeError, range errors RangeError', async () => {
  const ws = await seeded()
  await assert.rejects(ws.search(5), TypeError)
  await assert.rejects(ws.search('a', { topK: -1 }), RangeError)
  await assert.rejects(ws.search('a', { minScore: 2 }), RangeError)
  await assert.rejects(ws.search('a', { topK: '1' }), TypeError)
})

test('a path or prefix holding a lone UTF-16 surrogate is a TypeError (it would become another string: two paths, one document); a surrogate pair is a path like any other', async () => {
  const { fileKind } = await import('../index.js').then((m) => m.default ?? m)
  const ws = await seeded()
  const before = await snapshot(ws)
  const lone = ['notes/\ud83d.md', 'notes/\ude00.md']
  for (const path of lone) {
    const named = { name: 'TypeError', message: /must be a well-formed string, got one with a lone UTF-16 surrogate/ }
    await assert.rejects(ws.index(path, 'needle'), named)
    await assert.rejects(ws.indexMany([{ path: 'ok.md', content: 'x' }, { path, content: 'needle' }]), named)
    await assert.rejects(ws.unindex(path), named)
    await assert.rejects(ws.removeByPrefix(path), named)
    assert.throws(() => ws.countByPrefix(path), named)
    // Paths to read and prefixes to search within too (they read, or searched, the folder named U+FFFD).
    await assert.rejects(ws.rebuildSearchIndex([path]), named)
    await assert.rejects(ws.search('needle', { pathPrefix: path }), named)
    assert.throws(() => new Workspace({ bm25: true, autoIndexPaths: [path] }), named)
    await assert.rejects(new lib.LocalVector().deleteVectors({ indexName: 'x', ids: [path] }), named)
    await assert.rejects(new lib.LocalVector().deleteVector({ indexName: 'x', id: path }), named)
    await assert.rejects(new lib.LocalVector().createIndex({ indexName: path, dimension: 2 }), { name: 'TypeError', message: /indexName must be a well-formed string/ })
    await assert.rejects(new lib.LocalVector().updateVector({ indexName: 'x', id: path, update: { metadata: {} } }), named)
  }
  assert.deepEqual(await snapshot(ws), before)
  await ws.index('notes/\ud83d\ude00.md', 'needle')
  assert.deepEqual((await ws.search('needle')).map((r) => r.id), ['notes/\ud83d\ude00.md'])
  // fileKind() names its argument too.
  assert.throws(() => fileKind(undefined), { name: 'TypeError', message: 'path must be a string, got undefined' })
  assert.throws(() => fileKind(5), { name: 'TypeError', message: 'path must be a string, got the number 5' })
  assert.equal(fileKind('src/a.rs'), 'source')
})

test('undefined counts as not given', async () => {
  const ws = await seeded()
  const results = await ws.search('alpha', { topK: undefined, mode: undefined, minScore: undefined, filter: undefined, typo: undefined })
  assert.equal(results.length, 1)
  await ws.index('c', 'alpha again', { metadata: undefined, startLineOffset: undefined })
  assert.equal((await ws.search('alpha', undefined)).length, 2)
  assert.equal(new Workspace({ bm25: true, id: undefined, autoIndexPaths: undefined }).canBM25, true)
})

const BAD_OPTIONS = [
  ['Workspace options', 'not an object'],
  ['bm25', { bm25: 'yes' }],
  ['bm25', { bm25: 1 }],
  ['bm26', { bm26: true }],
  ['id', { id: 5 }],
  ['id', { id: '' }],
  ['autoIndexPaths', { autoIndexPaths: 'docs' }],
  ['autoIndexPaths[0]', { autoIndexPaths: [1] }],
  ['chunking.maxChars', { chunking: { maxChars: 0 } }],
  ['chunking.overlapLines', { chunking: { overlapLines: -1 } }],
  ['overlap', { chunking: { overlap: 2 } }],
  ['respectGitignore', { respectGitignore: 'no' }],
  ['onProgress', { onProgress: 5 }],
  ['filesystem', { filesystem: 'dir' }],
  ['filesystem', { filesystem: {} }],
  ['embedConcurrency', { embedConcurrency: 0 }],
  ['searchIndexName', { searchIndexName: 5 }],
  ['bm25.k1', { bm25: { k1: -1 } }],
  ['bm25.k1', { bm25: { k1: 'high' } }],
  ['bm25.b', { bm25: { b: 2 } }],
  ['bm25.bm25.b', { bm25: { bm25: { b: NaN } } }],
  ['k2', { bm25: { k2: 1 } }],
  ['bm25.tokenize.minLength', { bm25: { tokenize: { minLength: -1 } } }],
  ['bm25.tokenize.stopwords', { bm25: { tokenize: { stopwords: 'the' } } }],
  ['bm25.tokenize.stopwords[1]', { bm25: { tokenize: { stopwords: ['the', 3] } } }],
  ['bm25.tokenize.splitPattern', { bm25: { tokenize: { splitPattern: 5 } } }],
  ['bm25.tokenize.splitPattern', { bm25: { tokenize: { splitPattern: { source: '(', flags: '' } } } }],
  ['bm25.tokenize.tokenizer', { bm25: { tokenize: { tokenizer: 'words' } } }],
  ['bm25.tokenize.stem', { bm25: { tokenize: { stem: 'french' } } }],
  ['bm25.tokenize.lowercase', { bm25: { tokenize: { lowercase: 1 } } }],
  ['lowercased', { bm25: { tokenize: { lowercased: true } } }],
  ['bm25.tokenize.preset', { bm25: { tokenize: { preset: 'lucene' } } }],
]

test('bad constructor options throw an Error that names the option', () => {
  for (const [option, options] of BAD_OPTIONS) {
    assert.throws(
      () => new Workspace(options),
      (err) => err instanceof Error && err.message.includes(option),
      `${option}: ${JSON.stringify(options)}`,
    )
  }
})

test('bad LocalFilesystem options throw', () => {
  for (const [option, options] of [
    ['basePath', {}],
    ['basePath', { basePath: 5 }],
    ['basePath', { basePath: '' }],
    ['LocalFilesystem options', 'dir'],
    ['readOnly', { basePath: '.', readOnly: 'yes' }],
  ]) {
    assert.throws(() => new LocalFilesystem(options), (err) => err instanceof Error && err.message.includes(option), option)
  }
})

// A sparse array's length costs nothing to set: the addon read, or made room for, every one of
// 2^32 - 1 elements before it looked at the first (an abort where memory is limited, minutes of a
// frozen thread where it is not). Each is refused at its first hole.
test('an array of 2^32 - 1 holes is refused at its first element, as an answer too', { timeout: 60_000 }, async () => {
  const holes = () => {
    const a = []
    a.length = 2 ** 32 - 1
    return a
  }
  assert.throws(() => new Workspace({ bm25: true, autoIndexPaths: holes() }), { name: 'TypeError', message: /autoIndexPaths\[0\]/ })
  assert.throws(() => new Workspace({ bm25: { tokenize: { stopwords: holes() } } }), { name: 'TypeError', message: /stopwords/ })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: '.' }), bm25: true })
  await assert.rejects(ws.rebuildSearchIndex(holes()), { name: 'TypeError', message: /paths\[0\]/ })
  const store = new lib.LocalVector()
  await store.createIndex({ indexName: 'i', dimension: 2 })
  await assert.rejects(store.query({ indexName: 'i', queryVector: holes() }), /element 0/)
  await assert.rejects(store.upsert({ indexName: 'i', vectors: holes() }), /vector 1/)
  await assert.rejects(store.upsert({ indexName: 'i', vectors: [[1, 0]], metadata: holes() }), /metadata\[0\]|metadata/)
  await assert.rejects(store.deleteVectors({ indexName: 'i', ids: holes() }), /ids\[0\]/)
  // A filter that matches every vector by its form does not empty the index.
  await store.upsert({ indexName: 'i', vectors: [[1, 0]], ids: ['kept'] })
  for (const filter of [{ $or: [{}] }, { $or: [{ k: 1 }, { $and: [] }] }]) {
    await assert.rejects(store.deleteVectors({ indexName: 'i', filter }), /would delete every vector/)
  }
  assert.equal((await store.describeIndex({ indexName: 'i' })).count, 1)

  // The user's embedder (single and batch) and tokenizer answering one.
  for (const embedder of [async () => holes(), Object.assign(async () => [holes()], { batch: true })]) {
    const v = new Workspace({ bm25: true, vectorStore: new lib.LocalVector(), embedder })
    await assert.rejects(v.index('a', 'alpha'), /4294967295 entries/)
  }
  const batch = new Workspace({ bm25: true, vectorStore: new lib.LocalVector(), embedder: Object.assign(async () => holes(), { batch: true }) })
  await assert.rejects(batch.index('a', 'alpha'), /4294967295 entries/)
  const tokenized = new Workspace({ bm25: { tokenize: { tokenizer: () => holes() } } })
  await assert.rejects(tokenized.index('a', 'alpha'), /4294967295 entries/)
  // Within the bound at each level, but many: a batch of 16 vectors of 2^24 holes each.
  const holey = []
  holey.length = 2 ** 24 // (its backing store is 128 MB: one, answered for every text)
  const many = new Workspace({ bm25: true, vectorStore: new lib.LocalVector(), embedder: Object.assign(async (texts) => texts.map(() => holey), { batch: true }) })
  await assert.rejects(many.indexMany(Array.from({ length: 16 }, (_, i) => ({ path: `d${i}`, content: `text ${i}` }))), /element 0 is undefined/)
  // JSON data: metadata and a filter's $in.
  await assert.rejects(ws.index('m', 'alpha', { metadata: { tags: holes() } }), { name: 'TypeError', message: /metadata.tags is an array of 4294967295 entries/ })
  // A proxy read through its get trap alone is read as before (no \`in\`, which asks its has trap).
  const proxied = (values) => new Proxy([], { get: (target, key) => (key === 'length' ? values.length : values[Number(key)]) })
  const viaProxy = new Workspace({ bm25: true, vectorStore: new lib.LocalVector(), embedder: async () => proxied([1, 0, 0]) })
  await viaProxy.index('p', 'alpha')
  assert.equal((await viaProxy.search('alpha', { mode: 'vector' }))[0].id, 'p')
  await assert.rejects(store.query({ indexName: 'i', queryVector: [1, 0], filter: { tag: { $in: holes() } } }), /4294967295 entries/)
})
