// The Workspace API in bm25 mode: ids, scores, ordering, metadata, filters,
// removal, statistics and the life cycle.
import test from 'node:test'
import assert from 'node:assert/strict'
import { Workspace, LocalFilesystem, WorkspaceError, SearchNotAvailableError, WorkspaceNotReadyError, tree, bm25Workspace, ids } from './helpers.mjs'

test('ES modules get named exports', async () => {
  const esm = await import('../index.js')
  for (const name of ['Workspace', 'LocalFilesystem', 'WorkspaceError', 'SearchNotAvailableError', 'WorkspaceNotReadyError']) {
    assert.equal(typeof esm[name], 'function', name)
  }
  assert.equal(esm.Workspace, Workspace)
})

test('ids: given, or generated as ws-<time>-<6 chars>', () => {
  assert.equal(new Workspace({ id: 'my-ws', bm25: true }).id, 'my-ws')
  const a = new Workspace({ bm25: true }).id
  const b = new Workspace({ bm25: true }).id
  assert.match(a, /^ws-[0-9a-z]+-[0-9a-z]{6}$/)
  assert.notEqual(a, b)
})

test('capabilities and status', async () => {
  const ws = new Workspace({ bm25: true })
  assert.deepEqual([ws.canBM25, ws.canVector, ws.canHybrid], [true, false, false])
  const none = new Workspace()
  assert.deepEqual([none.canBM25, none.canVector, none.canHybrid], [false, false, false])
  assert.equal(ws.status, 'pending')
  const report = await ws.init()
  assert.deepEqual({ ...report, durationMs: 0 }, { indexed: 0, chunks: 0, skipped: [], failed: [], durationMs: 0, embedded: 0, reused: 0, reread: 0, removed: 0, warnings: [] })
  assert.equal(ws.status, 'ready')
  await ws.destroy()
  assert.equal(ws.status, 'destroyed')
  assert.equal(ws.canBM25, true)
})

// Okapi BM25 as Mastra computes it, for checking raw scores.
function bm25(docs, query, k1 = 1.5, b = 0.75) {
  const N = docs.length
  const avgdl = docs.reduce((s, d) => s + d.length, 0) / N
  const df = (t) => docs.filter((d) => d.includes(t)).length
  return docs.map((d) =>
    query.reduce((s, t) => {
      const tf = d.filter((x) => x === t).length
      if (tf === 0) return s
      const idf = Math.log((N - df(t) + 0.5) / (df(t) + 0.5) + 1)
      return s + (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * d.length) / avgdl))
    }, 0),
  )
}

test('bm25 scores: raw value as hand-computed, score normalised by the best match', async () => {
  const ws = new Workspace({ bm25: true })
  await ws.index('a', 'password reset guide')
  await ws.index('b', 'reset your router now')
  await ws.index('c', 'cooking pasta tonight')
  const results = await ws.search('password reset')
  const expected = bm25([['password', 'reset', 'guide'], ['reset', 'your', 'router', 'now'], ['cooking', 'pasta', 'tonight']], ['password', 'reset'])
  assert.deepEqual(ids(results), ['a', 'b'])
  assert.ok(Math.abs(results[0].scoreDetails.bm25 - expected[0]) < 1e-9)
  assert.ok(Math.abs(results[1].scoreDetails.bm25 - expected[1]) < 1e-9)
  assert.equal(results[0].score, 1)
  assert.ok(Math.abs(results[1].score - expected[1] / expected[0]) < 1e-12)
  assert.equal(results[0].content, 'password reset guide')
})

test('k1 and b are used in every bm25 form', async () => {
  const docs = [['alpha', 'beta', 'beta'], ['beta', 'gamma', 'delta', 'delta', 'delta']]
  for (const [bm25Option, k1, b] of [
    [{ k1: 2, b: 0 }, 2, 0],
    [{ bm25: { k1: 0.5, b: 1 } }, 0.5, 1],
    [{ k1: 3, b: 0.2, tokenize: { minLength: 1 } }, 3, 0.2],
  ]) {
    const ws = new Workspace({ bm25: bm25Option })
    await ws.index('d0', 'alpha beta beta')
    await ws.index('d1', 'beta gamma delta delta delta')
    const results = await ws.search('beta', { topK: 2 })
    const expected = bm25(docs, ['beta'], k1, b)
    for (const r of results) assert.ok(Math.abs(r.scoreDetails.bm25 - expected[Number(r.id[1])]) < 1e-9, JSON.stringify(bm25Option))
  }
})

test('topK defaults to 5; ties are broken by id', async () => {
  const ws = new Workspace({ bm25: true })
  for (const id of ['m', 'z', 'b', 'x', 'a', 'q', 'c']) await ws.index(id, 'same words here')
  const results = await ws.search('words')
  assert.deepEqual(ids(results), ['a', 'b', 'c', 'm', 'q'])
  assert.ok(results.every((r) => r.score === 1))
  assert.deepEqual(ids(await ws.search('words', { topK: 10 })), ['a', 'b', 'c', 'm', 'q', 'x', 'z'])
  assert.deepEqual(await ws.search('words', { topK: 0 }), [])
})

test('lineRange: first and last line holding a query token, shifted by startLineOffset', async () => {
  const ws = new Workspace({ bm25: true })
  await ws.index('doc', 'intro\nthe password is here\nnothing\nreset it\nend')
  await ws.index('shifted', 'zero\npassword', { startLineOffset: 40 })
  const [doc] = await ws.search('reset password', { topK: 1 })
  assert.equal(doc.id, 'doc')
  assert.deepEqual(doc.lineRange, { start: 2, end: 4 })
  const shifted = (await ws.search('password', { topK: 5 })).find((r) => r.id === 'shifted')
  assert.deepEqual(shifted.lineRange, { start: 41, end: 41 })
})

test('metadata round trip, and no metadata when none was given', async () => {
  const ws = new Workspace({ bm25: true })
  const metadata = { category: 'api', n: 3, nested: { deep: [1, 'two'] }, flag: false }
  await ws.index('/docs/api.md', 'api reference', { metadata, type: 'text', mimeType: 'text/markdown' })
  await ws.index('plain', 'api plain')
  const results = await ws.search('api', { topK: 5 })
  const api = results.find((r) => r.id === '/docs/api.md')
  assert.deepEqual(api.metadata, { type: 'text', mimeType: 'text/markdown', ...metadata })
  const plain = results.find((r) => r.id === 'plain')
  assert.equal(plain.metadata, undefined)
  assert.ok(!('metadata' in plain))
})

test('results are the same few or many (passed as arguments up to 64 results, as one array beyond)', async () => {
  const ws = new Workspace({ bm25: true })
  const docs = []
  for (let i = 0; i < 150; i++) {
    const metadata = [{ sourceFile: `f${i}.md` }, { n: i, tag: 'x' }, JSON.parse(`{"__proto__":"p${i}"}`), undefined][i % 4]
    docs.push({ path: `d${String(i).padStart(3, '0')}`, content: `common ${'word '.repeat(1 + (i % 7))}line\nnext common`, metadata })
  }
  await ws.indexMany(docs)
  const few = await ws.search('common word', { topK: 20 })
  const many = await ws.search('common word', { topK: 150 })
  assert.equal(few.length, 20)
  assert.equal(many.length, 150)
  assert.deepEqual(many.slice(0, 20), few)
  for (const r of many) {
    const i = Number(r.id.slice(1))
    const want = [{ sourceFile: `f${i}.md` }, { n: i, tag: 'x' }, JSON.parse(`{"__proto__":"p${i}"}`), undefined][i % 4]
    assert.deepEqual(r.metadata, want, r.id)
    if (r.metadata) assert.equal(Object.getPrototypeOf(r.metadata), Object.prototype)
    assert.deepEqual(r.lineRange, { start: 1, end: 2 })
    assert.equal(typeof r.content, 'string')
    assert.ok(r.scoreDetails.bm25 > 0)
  }
})

test('ids are verbatim: /docs/a.md, docs/a.md and ./docs/a.md are three documents', async () => {
  const ws = new Workspace({ bm25: true })
  for (const id of ['/docs/a.md', 'docs/a.md', './docs/a.md', 'db://records/42']) await ws.index(id, 'same text')
  assert.equal(ws.stats().documents, 4)
  assert.deepEqual(ids(await ws.search('text', { topK: 10 })).sort(), ['./docs/a.md', '/docs/a.md', 'db://records/42', 'docs/a.md'])
})

test('filter applies to BM25 hits before top-k', async () => {
  const ws = new Workspace({ bm25: true })
  await ws.index('a', 'shared term strong shared term', { metadata: { category: 'guide', level: 1 } })
  await ws.index('b', 'shared term', { metadata: { category: 'api', level: 2 } })
  await ws.index('c', 'shared', { metadata: { category: 'api', level: 3, tags: ['x', 'y'] } })
  await ws.index('d', 'shared term')
  assert.deepEqual(ids(await ws.search('shared term', { filter: { category: 'api' } })), ['b', 'c'])
  const top1 = await ws.search('shared term', { topK: 1, filter: { category: 'api' } })
  assert.deepEqual(ids(top1), ['b'])
  assert.equal(top1[0].score, 1)
  assert.deepEqual(ids(await ws.search('shared', { filter: { level: { $gte: 2 } } })).sort(), ['b', 'c'])
  assert.deepEqual(ids(await ws.search('shared', { filter: { tags: { $in: ['y'] } } })), ['c'])
  assert.deepEqual(ids(await ws.search('shared', { filter: { category: { $exists: false } } })), ['d'])
  assert.deepEqual(ids(await ws.search('shared', { filter: { $or: [{ level: 1 }, { level: 3 }] } })).sort(), ['a', 'c'])
  assert.deepEqual(ids(await ws.search('shared', { filter: { $and: [{ category: 'api' }, { level: { $ne: 2 } }] } })), ['c'])
  // null stands for a missing field, as in MongoDB ($in: [null] missed d; $nin: [null] took it).
  assert.deepEqual(ids(await ws.search('shared', { filter: { category: { $in: [null, 'guide'] } } })).sort(), ['a', 'd'])
  assert.deepEqual(ids(await ws.search('shared', { filter: { category: { $nin: [null, 'guide'] } } })).sort(), ['b', 'c'])
})

test('minScore filters on the normalised score', async () => {
  const ws = new Workspace({ bm25: true })
  await ws.index('strong', 'rust rust rust native addon')
  await ws.index('weak', 'rust and a very long text about many other unrelated things entirely')
  const all = await ws.search('rust native')
  assert.equal(all.length, 2)
  const kept = await ws.search('rust native', { minScore: all[1].score + 1e-9 })
  assert.deepEqual(ids(kept), ['strong'])
  assert.equal((await ws.search('rust native', { minScore: 1 })).length, 1)
  assert.equal((await ws.search('rust native', { minScore: 0 })).length, 2)
})

test('queries without tokens find nothing', async () => {
  const ws = new Workspace({ bm25: true })
  await ws.index('a', 'the cat sat on the mat')
  assert.deepEqual(await ws.search(''), [])
  assert.deepEqual(await ws.search('the of a'), [])
  assert.deepEqual(await ws.search('!!!'), [])
  assert.deepEqual(await ws.search('unknownword'), [])
})

test('re-indexing replaces a document', async () => {
  const ws = new Workspace({ bm25: true })
  await ws.index('a', 'old words')
  await ws.index('a', 'new text')
  assert.deepEqual(await ws.search('old'), [])
  assert.deepEqual(ids(await ws.search('new')), ['a'])
  assert.equal(ws.stats().documents, 1)
  assert.equal(ws.stats().tokens, 2)
})

test('unindex removes a document; clear removes everything', async () => {
  const ws = new Workspace({ bm25: true })
  await ws.index('a', 'alpha beta')
  await ws.index('b', 'beta gamma')
  assert.equal(await ws.unindex('a'), true)
  assert.equal(await ws.unindex('a'), false)
  assert.equal(await ws.unindex('never'), false)
  assert.deepEqual(await ws.search('alpha'), [])
  assert.deepEqual(ids(await ws.search('beta')), ['b'])
  assert.deepEqual(ws.stats(), { documents: 1, terms: 2, tokens: 2, avgDocLength: 2, vectors: 0, memoryBytes: ws.stats().memoryBytes })
  await ws.clear()
  assert.deepEqual(await ws.search('beta'), [])
  const s = ws.stats()
  assert.deepEqual([s.documents, s.terms, s.tokens, s.avgDocLength], [0, 0, 0, 0])
})

test('indexMany indexes documents in one call and reports them', async () => {
  const ws = new Workspace({ bm25: true })
  const report = await ws.indexMany([
    { path: 'a', content: 'first document text' },
    { path: 'b', content: 'second document', metadata: { k: 1 } },
    { path: 'c', content: 'zero\nthird document', startLineOffset: 10 },
    { path: 'a', content: 'replaced first' },
  ])
  // The same path twice: the last one wins and counts once.
  assert.equal(report.indexed, 3)
  assert.equal(report.chunks, 0)
  assert.deepEqual(report.failed, [])
  assert.equal(ws.stats().documents, 3)
  assert.deepEqual(await ws.search('text'), [])
  const results = await ws.search('document', { topK: 5 })
  assert.deepEqual(ids(results), ['b', 'c'])
  assert.deepEqual(results[0].metadata, { k: 1 })
  assert.deepEqual(results[1].lineRange, { start: 11, end: 11 })
  assert.equal((await ws.indexMany([])).indexed, 0)
})

test('a large indexMany (texts kept in shared blocks) returns every text exactly, then replaces and removes them', async () => {
  const ws = new Workspace({ bm25: true })
  // Enough documents for the batch's texts to be copied into shared blocks;
  // ASCII, accented, astral and empty texts side by side.
  // A word of letters per document (digits would be split off).
  const tag = (i) => 'q' + [...String(i)].map((d) => 'abcdefghij'[d]).join('')
  const text = (i) => ['', `plain ${tag(i)}`, `café ${tag(i)} naïve`, `emoji 😀 ${tag(i)}`][i % 4]
  const docs = Array.from({ length: 600 }, (_, i) => ({ path: `d${i}`, content: text(i) }))
  assert.equal((await ws.indexMany(docs)).indexed, 600)
  for (const i of [1, 2, 3, 297, 298, 599]) {
    const [hit] = await ws.search(tag(i), { topK: 1 })
    assert.equal(hit.id, `d${i}`)
    assert.equal(hit.content, text(i))
  }
  await ws.indexMany(docs.slice(0, 300).map((d) => ({ path: d.path, content: 'replaced text' })))
  await ws.unindex('d599')
  assert.equal((await ws.search('replaced', { topK: 1000 })).length, 300)
  assert.deepEqual(await ws.search(tag(1)), [])
  assert.deepEqual(await ws.search(tag(599)), [])
  assert.equal((await ws.search(tag(598), { topK: 1 }))[0].content, text(598))
})

test('stats() counts documents, terms and tokens', async () => {
  const ws = new Workspace({ bm25: true })
  assert.deepEqual({ ...ws.stats(), memoryBytes: 0 }, { documents: 0, terms: 0, tokens: 0, avgDocLength: 0, vectors: 0, memoryBytes: 0 })
  await ws.index('a', 'one two three')
  await ws.index('b', 'three four')
  const s = ws.stats()
  assert.deepEqual([s.documents, s.terms, s.tokens, s.avgDocLength, s.vectors], [2, 4, 5, 2.5, 0])
  assert.ok(s.memoryBytes > 0)
})

test('without search configured: SearchNotAvailableError (NO_SEARCH)', async () => {
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: '.' }) })
  for (const call of [() => ws.search('x'), () => ws.index('a', 'b'), () => ws.indexMany([]), () => ws.unindex('a')]) {
    await assert.rejects(call(), (err) => {
      assert.ok(err instanceof SearchNotAvailableError)
      assert.ok(err instanceof WorkspaceError)
      assert.ok(err instanceof Error)
      assert.equal(err.name, 'SearchNotAvailableError')
      assert.equal(err.code, 'NO_SEARCH')
      assert.equal(err.message, 'Workspace does not have search configured (enable bm25 or provide vectorStore + embedder)')
      return true
    })
  }
  // init() and rebuildSearchIndex() do nothing without search, as Mastra.
  assert.equal((await ws.init()).indexed, 0)
})

test('unconfigured modes reject with Mastra messages', async () => {
  const ws = new Workspace({ bm25: true })
  await assert.rejects(ws.search('x', { mode: 'vector' }), { message: 'Vector search requires vector configuration.' })
  await assert.rejects(ws.search('x', { mode: 'hybrid' }), { message: 'Hybrid search requires both vector and BM25 configuration.' })
  assert.deepEqual(await ws.search('x', { mode: 'bm25' }), [])
})

test('vectorStore without embedder: WorkspaceError INVALID_SEARCH_CONFIG from the constructor', () => {
  assert.throws(
    () => new Workspace({ vectorStore: { upsert() {}, query() {} } }),
    (err) => err instanceof WorkspaceError && err.code === 'INVALID_SEARCH_CONFIG' && err.message === 'vectorStore requires an embedder' && err.workspaceId === undefined,
  )
})

test("Mastra's other Workspace options are accepted and ignored; a BM25-only workspace never checks searchIndexName", async () => {
  const ws = new Workspace({
    bm25: true,
    name: 'n',
    sandbox: {},
    skills: ['/skills'],
    mounts: {},
    tools: { enabled: true },
    lsp: false,
    autoSync: true,
    operationTimeout: 1000,
    searchIndexName: 'not a valid-name!',
  })
  await ws.index('a', 'works')
  assert.deepEqual(ids(await ws.search('works')), ['a'])
})

test('after destroy(): WorkspaceNotReadyError, getters still answer, destroy() resolves again', async () => {
  const ws = new Workspace({ id: 'gone', bm25: true })
  await ws.index('a', 'alpha')
  await ws.destroy()
  const calls = [
    () => ws.init(),
    () => ws.rebuildSearchIndex(),
    () => ws.index('a', 'b'),
    () => ws.indexMany([]),
    () => ws.unindex('a'),
    () => ws.clear(),
    () => ws.search('alpha'),
  ]
  for (const call of calls) {
    await assert.rejects(call(), (err) => {
      assert.ok(err instanceof WorkspaceNotReadyError)
      assert.equal(err.code, 'NOT_READY')
      assert.equal(err.workspaceId, 'gone')
      assert.equal(err.message, 'Workspace is not ready (status: destroyed)')
      return true
    })
  }
  assert.throws(() => ws.stats(), WorkspaceNotReadyError)
  assert.equal(ws.canBM25, true)
  assert.equal(ws.status, 'destroyed')
  await ws.destroy()
})

test('a workspace without a filesystem indexes documents given to it', async () => {
  const ws = new Workspace({ bm25: true, autoIndexPaths: ['docs'] })
  const report = await ws.init()
  assert.equal(report.indexed, 0)
  await ws.index('note', 'hello world')
  assert.deepEqual(ids(await ws.search('hello')), ['note'])
})

test('LocalFilesystem resolves basePath against the current directory', (t) => {
  const fs = new LocalFilesystem({ basePath: './some/../dir' })
  assert.equal(fs.basePath, `${process.cwd()}/dir`)
  assert.equal(fs.readOnly, false)
  const dir = tree(t)
  assert.equal(new LocalFilesystem({ basePath: dir, readOnly: true }).readOnly, true)
})

test('a relative basePath is taken as path.resolve() takes it, when the workspace is made', async () => {
  const path = await import('node:path')
  for (const given of ['docs', './docs/sub/..', 'docs/']) {
    assert.equal(new Workspace({ filesystem: { basePath: given }, bm25: true }).filesystem.basePath, path.resolve(given))
  }
})
