// The user's embedder, vector store and reranker answering in odd but
// legal ways (thenables, typed arrays, values Mastra ignores), or in
// hostile ones (getters that throw, non-JSON data); hybrid search while a
// write lands; filters on the fields a store sees; the embedder's bound of
// calls in flight shared by every call of the workspace.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Workspace, lib, tree, VectorStoreError } from './helpers.mjs'
import { hashEmbed } from './vector-helpers.mjs'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const embedBatch = (f) => Object.assign(f, { batch: true })
const hashBatch = embedBatch(async (texts) => texts.map((t) => hashEmbed(t, 16)))
const scoreOf = (results) => results.map((r) => [r.id, r.score.toFixed(6)])
/** A temporary folder of `n` small files (`f<i>.md`), removed after the test. */
const heronFiles = (t, n) => tree(t, Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}.md`, `file ${i} about herons`])))

/** A MastraVector over a LocalVector whose methods `patch` may wrap. */
function wrappedStore(patch = {}) {
  const inner = new lib.LocalVector({ id: 'inner' })
  const store = {
    inner,
    createIndex: (a) => inner.createIndex(a),
    upsert: (a) => inner.upsert(a),
    query: (a) => inner.query(a),
    deleteVectors: (a) => inner.deleteVectors(a),
    deleteIndex: (a) => inner.deleteIndex(a),
    listIndexes: () => inner.listIndexes(),
    describeIndex: (a) => inner.describeIndex(a),
  }
  for (const [name, wrap] of Object.entries(patch)) store[name] = wrap(store[name])
  return store
}
const storedIds = async (store) =>
  (await store.inner.query({ indexName: (await store.inner.listIndexes())[0], queryVector: hashEmbed('x', 16), topK: 100 })).map((h) => h.id).sort()

test('a store that wrote and answers something Mastra ignores (a Map, a Date, a cycle) is not taken for one that failed', async () => {
  const cyclic = {}
  cyclic.self = cyclic
  for (const odd of [new Map([['a', 1]]), new Date(), cyclic, 10n]) {
    const store = wrappedStore({
      upsert: (f) => async (a) => (await f(a), odd),
      deleteVectors: (f) => async (a) => (await f(a), odd),
      createIndex: (f) => async (a) => (await f(a), odd),
    })
    const ws = new Workspace({ bm25: true, embedder: hashBatch, vectorStore: store })
    await ws.index('a.md', 'alpha beta')
    assert.equal(ws.stats().documents, 1)
    assert.deepEqual(await storedIds(store), ['a.md'])
    await ws.unindex('a.md')
    assert.deepEqual(await storedIds(store), [], 'unindex() removed it from the store and says so')
    assert.equal(ws.stats().documents, 0)
    await ws.destroy()
  }
})

test("a store's query answer that is not JSON data is a VectorStoreError naming the path", async () => {
  const store = wrappedStore({ query: (f) => async (a) => (await f(a)).map((h) => ({ ...h, metadata: { ...h.metadata, at: new Date() } })) })
  const ws = new Workspace({ bm25: true, embedder: hashBatch, vectorStore: store })
  await ws.index('a.md', 'alpha')
  await assert.rejects(ws.search('alpha', { mode: 'vector' }), (e) => e instanceof VectorStoreError && e.code === 'VECTOR_STORE' && /vectorStore\.query answer\[0\]\.metadata\.at .*Date/.test(e.message))
  await ws.destroy()
})

test("thenables that are not native promises are awaited, as Mastra awaits them: the store's write runs, the embedder's answer is read", async () => {
  // A query builder (knex-like): nothing happens until `then` is called.
  const lazy = (run) => ({ then: (ok, fail) => run().then(ok, fail) })
  const store = wrappedStore({ upsert: (f) => (a) => lazy(() => f(a)), query: (f) => (a) => lazy(() => f(a)) })
  const embedder = embedBatch((texts) => lazy(async () => texts.map((t) => hashEmbed(t, 16))))
  const ws = new Workspace({ bm25: true, embedder, vectorStore: store })
  await ws.index('a.md', 'alpha beta')
  assert.deepEqual(await storedIds(store), ['a.md'])
  assert.deepEqual((await ws.search('alpha', { mode: 'vector' })).map((r) => r.id), ['a.md'])
  await ws.destroy()
})

test('a Float64Array from the embedder or the reranker is read as numbers', async () => {
  const ws = new Workspace({
    bm25: true,
    embedder: embedBatch(async (texts) => texts.map((t) => Float64Array.from(hashEmbed(t, 16)))),
    rerank: (q, candidates) => Float64Array.from(candidates, (c) => (c.id === 'b.md' ? 1 : 0)),
  })
  await ws.indexMany([{ path: 'a.md', content: 'alpha alpha' }, { path: 'b.md', content: 'alpha beta' }])
  const results = await ws.search('alpha', { mode: 'hybrid' })
  assert.equal(results[0].id, 'b.md')
  assert.equal(results[0].scoreDetails.rerankError, undefined)
  await ws.destroy()
})

test("a getter that throws in the embedder's answer rejects the call with what it threw, and leaves no uncaught exception", () => {
  // A child with Node's future default: an exception left pending by the
  // addon becomes an uncaughtException there and exits the process.
  const script = `
    const { Workspace } = require(${JSON.stringify(fileURLToPath(new URL('../index.js', import.meta.url)))})
    const boom = new Error('getter boom')
    const answer = () => { const v = [1, 0, 0]; Object.defineProperty(v, 0, { get() { throw boom } }); return v }
    ;(async () => {
      const single = new Workspace({ bm25: true, embedder: async () => answer() })
      const batch = new Workspace({ bm25: true, embedder: Object.assign(async (ts) => ts.map(answer), { batch: true }) })
      for (const ws of [single, batch]) {
        await ws.index('a.md', 'alpha').then(() => { throw new Error('resolved') }, (e) => { if (e !== boom) throw e })
      }
      const rr = new Workspace({ bm25: true, rerank: (q, c) => { const s = c.map(() => 1); Object.defineProperty(s, 0, { get() { throw boom } }); return s } })
      await rr.index('a.md', 'alpha')
      const [hit] = await rr.search('alpha')
      if (!/getter boom/.test(hit.scoreDetails.rerankError)) throw new Error('rerankError: ' + hit.scoreDetails.rerankError)
      console.log('ok')
    })().catch((e) => { console.error(e); process.exit(3) })
  `
  const r = spawnSync(process.execPath, ['--force-node-api-uncaught-exceptions-policy=true', '-e', script], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout.trim(), 'ok')
  assert.doesNotMatch(r.stderr, /DEP0168|Uncaught/)
})

test('minScore applies to the score returned: once reranked, to the blend', async () => {
  // The reranker dislikes the first stage's best, which the first stage's minScore let through.
  const ws = new Workspace({ bm25: true, rerank: (q, candidates) => candidates.map((c, i) => (i === 0 ? 0 : 10)) })
  await ws.indexMany([
    { path: 'a.md', content: 'alpha alpha alpha beta' },
    { path: 'b.md', content: 'alpha alpha alpha gamma' },
    { path: 'c.md', content: 'alpha' },
  ])
  const all = await ws.search('alpha', { topK: 10 })
  assert.ok(all.some((r) => r.score < 0.9), JSON.stringify(scoreOf(all)))
  const kept = await ws.search('alpha', { topK: 10, minScore: 0.9 })
  assert.deepEqual(scoreOf(kept), scoreOf(all.filter((r) => r.score >= 0.9)))
  await ws.destroy()
})

test('LocalVector.query refuses a query vector that is not finite (it would score every vector NaN)', async () => {
  const store = new lib.LocalVector({ id: 'nan' })
  await store.createIndex({ indexName: 'i', dimension: 3 })
  await store.upsert({ indexName: 'i', vectors: [[1, 0, 0]], ids: ['a'] })
  for (const q of [[NaN, 0, 0], [Infinity, 1, 0], [1e39, 0, 0]]) {
    await assert.rejects(store.query({ indexName: 'i', queryVector: q }), (e) => e instanceof TypeError && /finite|beyond a 32-bit float's range/.test(e.message))
  }
  assert.equal((await store.query({ indexName: 'i', queryVector: [1, 0, 0] }))[0].score, 1)
})

test('embedConcurrency bounds the calls in flight for the whole workspace: writes and searches together', async () => {
  let inFlight = 0
  let most = 0
  const embedder = embedBatch(async (texts) => {
    most = Math.max(most, ++inFlight)
    await sleep(5)
    inFlight--
    return texts.map((t) => hashEmbed(t, 16))
  })
  embedder.maxBatchSize = 2
  const ws = new Workspace({ bm25: true, embedder, embedConcurrency: 2 })
  const docs = Array.from({ length: 20 }, (_, i) => ({ path: `d${i}.md`, content: `alpha ${i}` }))
  await Promise.all([ws.indexMany(docs), ...Array.from({ length: 10 }, () => ws.search('alpha', { mode: 'vector' }))])
  assert.equal(most, 2)
  await ws.destroy()
})

test("a filter on `id` keeps the same documents in both halves of a hybrid search; one on `text` is refused outside vector mode", async () => {
  const ws = new Workspace({ bm25: true, embedder: hashBatch })
  await ws.indexMany([{ path: 'a.md', content: 'alpha beta' }, { path: 'b.md', content: 'alpha gamma' }])
  const none = await ws.search('alpha', { mode: 'hybrid', filter: { id: { $nin: ['a.md'] } } })
  assert.deepEqual(none.map((r) => r.id), ['b.md'])
  const [only] = await ws.search('alpha', { mode: 'hybrid', filter: { id: 'a.md' } })
  assert.equal(only.id, 'a.md')
  assert.ok(only.scoreDetails.bm25 > 0 && only.scoreDetails.vector > 0, JSON.stringify(only.scoreDetails))
  assert.deepEqual((await ws.search('alpha', { mode: 'bm25', filter: { id: 'a.md' } })).map((r) => r.id), ['a.md'])
  for (const mode of ['hybrid', 'bm25']) {
    await assert.rejects(ws.search('alpha', { mode, filter: { text: { $exists: true } } }), (e) => e instanceof TypeError && /text/.test(e.message))
  }
  assert.equal((await ws.search('alpha', { mode: 'vector', filter: { text: 'alpha beta' } }))[0].id, 'a.md')
  await ws.destroy()
  // Without a store, `text` is the user's own metadata, as before.
  const plain = new Workspace({ bm25: true })
  await plain.index('x.md', 'alpha', { metadata: { text: 'mine' } })
  await plain.index('y.md', 'alpha')
  assert.deepEqual((await plain.search('alpha', { filter: { text: 'mine' } })).map((r) => r.id), ['x.md'])
  await plain.destroy()
})

test('a hybrid search sees a write that lands while it runs whole or not at all', async () => {
  // Slow at the right moment: the query's embedding, then the store's query
  // (between the two halves' reads).
  let slowEmbed = false
  let slowQuery = false
  const embedder = embedBatch(async (texts) => {
    if (slowEmbed && texts[0] === 'alpha') await sleep(150)
    return texts.map((t) => hashEmbed(t, 16))
  })
  const store = wrappedStore({ query: (f) => async (a) => (slowQuery ? await sleep(150) : null, f(a)) })
  const ws = new Workspace({ bm25: true, embedder, vectorStore: store })
  await ws.index('x.md', 'alpha beta')
  const states = async () => scoreOf(await ws.search('alpha', { mode: 'hybrid' }))
  for (const slow of ['embed', 'query']) {
    for (const write of ['index', 'unindex']) {
      if (write === 'index') await ws.unindex('y.md')
      else await ws.index('y.md', 'alpha gamma')
      const before = await states()
      ;[slowEmbed, slowQuery] = [slow === 'embed', slow === 'query']
      const during = ws.search('alpha', { mode: 'hybrid' })
      await sleep(40)
      await (write === 'index' ? ws.index('y.md', 'alpha gamma') : ws.unindex('y.md'))
      const seen = scoreOf(await during)
      ;[slowEmbed, slowQuery] = [false, false]
      const after = await states()
      assert.notDeepEqual(before, after)
      assert.ok(
        JSON.stringify(seen) === JSON.stringify(before) || JSON.stringify(seen) === JSON.stringify(after),
        `${slow}/${write}: ${JSON.stringify(seen)} is neither ${JSON.stringify(before)} nor ${JSON.stringify(after)}`,
      )
    }
  }
  await ws.destroy()
})

test('a store is asked for a topK it can take, as a number: a huge topK in hybrid mode is capped at 2^31 - 1', async () => {
  const asked = []
  const store = {
    async createIndex() {},
    async upsert() {},
    async query({ topK }) { asked.push(topK); return [] },
    async deleteVectors() {},
  }
  const embedder = Object.assign(async (ts) => ts.map(() => [1, 0, 0]), { batch: true })
  const ws = new Workspace({ bm25: true, embedder, vectorStore: store })
  await ws.index('a', 'alpha words')
  for (const mode of ['hybrid', 'vector']) await ws.search('alpha', { mode, topK: 2 ** 40 })
  await ws.destroy()
  assert.deepEqual(asked.map((k) => typeof k), ['number', 'number'])
  assert.ok(asked.every((k) => k === 2 ** 31 - 1), JSON.stringify(asked))
})

test('integers past 32 bits in metadata and filters reach a store as numbers (a Date.now() timestamp), never as BigInt', async () => {
  const seen = []
  const store = {
    async createIndex() {},
    async upsert({ metadata }) { JSON.stringify(metadata); seen.push(...metadata.map((m) => m.createdAt)) },
    async query({ filter }) { JSON.stringify(filter); seen.push(filter.createdAt.$gt); return [] },
    async deleteVectors() {},
  }
  const embedder = Object.assign(async (ts) => ts.map(() => [1, 0, 0]), { batch: true })
  const ws = new Workspace({ bm25: true, embedder, vectorStore: store })
  const stamps = [1_700_000_000_123, 2 ** 32, -(2 ** 40), Number.MAX_SAFE_INTEGER]
  for (const [i, createdAt] of stamps.entries()) await ws.index(`d${i}`, 'alpha', { metadata: { createdAt } })
  await ws.search('alpha', { mode: 'vector', filter: { createdAt: { $gt: 1_700_000_000_000 } } })
  await ws.destroy()
  assert.deepEqual(seen, [...stamps, 1_700_000_000_000])
  assert.ok(seen.every((n) => typeof n === 'number'))
})

test('a lone UTF-16 surrogate in metadata or a filter (a value or a key) is a TypeError naming where, not a JSON parser message', async () => {
  const ws = new Workspace({ bm25: true })
  await assert.rejects(ws.index('a', 'x', { metadata: { k: 'a\uD800b' } }), { name: 'TypeError', message: 'index() options.metadata.k holds a lone UTF-16 surrogate: not valid Unicode text' })
  await assert.rejects(ws.index('a', 'x', { metadata: { ['k\uDC00']: 1 } }), { name: 'TypeError', message: 'index() options.metadata has a key holding a lone UTF-16 surrogate: not valid Unicode text' })
  await assert.rejects(ws.search('x', { filter: { k: ['ok', '\uDBFF'] } }), { name: 'TypeError', message: 'filter.k[1] holds a lone UTF-16 surrogate: not valid Unicode text' })
  await ws.index('a', 'alpha', { metadata: { k: 'a pair: 😀' } })
  assert.deepEqual((await ws.search('alpha'))[0].metadata, { k: 'a pair: 😀' })
  await ws.destroy()
})

test('an onProgress that throws, or whose promise rejects, makes init() reject with that very error once the index is built (it crashed the process); the next init() reports again', async (t) => {
  const base = heronFiles(t, 5)
  const boom = new Error('progress boom')
  for (const onProgress of [() => { throw boom }, async () => { throw boom }]) {
    let calls = 0
    let failing = true
    const ws = new Workspace({
      filesystem: new lib.LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['.'],
      onProgress: (event) => { calls++; if (failing) return onProgress(event) },
    })
    t.after(() => ws.destroy())
    await assert.rejects(ws.init(), (e) => e === boom)
    assert.equal(ws.status, 'ready', 'the index is built')
    assert.equal((await ws.search('herons', { topK: 10 })).length, 5)
    const afterFailure = calls
    failing = false
    const report = await ws.init()
    assert.equal(report.indexed, 5)
    assert.ok(calls > afterFailure, 'the next init() reports its progress again')
    assert.equal((await ws.rebuildSearchIndex()).indexed, 5, 'a failure is not carried into a later call')
  }
})

test('indexMany() rejecting with an error that refuses its `report` property (a Proxy whose trap throws, a frozen error) settles with that error (it never settled), and later calls work', async () => {
  const proxied = new Proxy(new Error('quota'), { defineProperty() { throw new Error('trap') }, set() { throw new Error('trap') } })
  const frozen = Object.freeze(new Error('frozen quota'))
  for (const thrown of [proxied, frozen]) {
    let failing = true
    const ws = new Workspace({ bm25: true, embedder: embedBatch(async (texts) => { if (failing) throw thrown; return texts.map((x) => hashEmbed(x, 16)) }) })
    const settled = await Promise.race([ws.indexMany([{ path: 'a', content: 'alpha' }]).then(() => 'resolved', (e) => e), sleep(5000).then(() => 'pending')])
    assert.equal(settled, thrown)
    failing = false
    await ws.index('b', 'beta')
    assert.equal((await ws.search('beta', { mode: 'bm25' }))[0]?.id, 'b')
    await ws.destroy()
  }
})

test('an option whose getter throws makes the constructor throw that very error (it threw "get_named_property_unchecked error")', () => {
  const boom = new Error('credentials expired')
  const embedder = Object.defineProperty(embedBatch(async (texts) => texts.map(() => [1, 0])), 'maxBatchSize', { get() { throw boom } })
  assert.throws(() => new Workspace({ bm25: true, embedder }), (e) => e === boom)
  const bm25 = Object.defineProperty({}, 'k1', { get() { throw boom } })
  assert.throws(() => new Workspace({ bm25 }), (e) => e === boom)
  assert.ok(new Workspace({ bm25: true }), 'the next construction works')
})

test('an embedder that throws null, a Symbol, a BigInt or an Error without a message gets a reason in report.failed (it was blank)', async (t) => {
  for (const thrown of [null, Symbol('quota'), 429n]) {
    const ws = new Workspace({ bm25: true, embedder: embedBatch(async () => { throw thrown }) })
    const error = await ws.indexMany([{ path: 'a', content: 'alpha' }]).then(() => undefined, (e) => e)
    assert.equal(error, thrown, 'rejects with what was thrown')
    await ws.destroy()
  }
  const base = heronFiles(t, 1)
  for (const thrown of [null, Symbol('quota'), 429n, new Error('')]) {
    const ws = new Workspace({ filesystem: new lib.LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['.'], embedder: embedBatch(async () => { throw thrown }) })
    const report = await ws.init()
    assert.match(report.failed[0].error, /^vectors not written: it threw a value with no message \(the file/, String(thrown))
    await ws.destroy()
  }
})

test('a promise of onProgress that rejects after its call ended rejects the next call to end (it was dropped)', async (t) => {
  const base = heronFiles(t, 5)
  let reject
  const late = new Promise((_, no) => { reject = no })
  let first = true
  const ws = new Workspace({
    filesystem: new lib.LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['.'],
    onProgress: () => { if (first) { first = false; return late } },
  })
  t.after(() => ws.destroy())
  assert.equal((await ws.init()).indexed, 5)
  const boom = new Error('answered late')
  reject(boom)
  await sleep(10)
  await assert.rejects(ws.rebuildSearchIndex(), (e) => e === boom)
  assert.equal((await ws.rebuildSearchIndex()).indexed, 5, 'once')
})

test('an onProgress failure while init() and rebuildSearchIndex() overlap rejects one of them, never neither (the second call took it)', async (t) => {
  const base = heronFiles(t, 300)
  const boom = new Error('first event fails')
  let thrown = false
  const ws = new Workspace({
    filesystem: new lib.LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['.'],
    onProgress: () => { if (!thrown) { thrown = true; throw boom } },
  })
  t.after(() => ws.destroy())
  const first = ws.init().then(() => 'resolved', (e) => e)
  await sleep(0)
  const second = ws.rebuildSearchIndex().then(() => 'resolved', (e) => e)
  const outcomes = await Promise.all([first, second])
  assert.equal(outcomes.filter((o) => o === boom).length, 1, String(outcomes))
})

test('the promises of onProgress events that reject after their call already rejected are that call\'s failure, not the next call\'s (one failure rejected two calls)', async (t) => {
  const base = heronFiles(t, 50)
  const rejecters = []
  let failing = true
  const ws = new Workspace({
    filesystem: new lib.LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['.'],
    onProgress: () => {
      if (!failing) return
      const answer = new Promise((_, reject) => rejecters.push(reject))
      if (rejecters.length === 2) rejecters[0](new Error('first event failed')) // (the second event's promise still pending)
      return answer
    },
  })
  t.after(() => ws.destroy())
  await assert.rejects(ws.init(), /first event failed/)
  failing = false
  rejecters[1](new Error('second event failed, after init() rejected'))
  await sleep(10)
  assert.equal((await ws.rebuildSearchIndex()).indexed, 50)
})

test('a write about to be sent when destroy() is called is never sent, nor is its createIndex (it reached the store after destroy() had resolved, and stayed)', () => {
  // The child holds the runtime's thread 600 ms just before a store write
  // is sent (a test pause), and destroys the workspace meanwhile.
  const script = `
    const { Workspace, LocalVector } = require(${JSON.stringify(fileURLToPath(new URL('../index.js', import.meta.url)))})
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
    ;(async () => {
      for (const first of [true, false]) {
        const inner = new LocalVector()
        const late = []
        let destroyed = false
        const store = Object.fromEntries(['createIndex', 'upsert', 'query', 'deleteVectors'].map((name) => [name, async (a) => {
          if (destroyed) late.push(name)
          return inner[name](a)
        }]))
        const embedder = Object.assign(async (texts) => texts.map((t) => [1, t.length]), { batch: true })
        const ws = new Workspace({ bm25: true, embedder, vectorStore: store })
        if (first) await ws.index('early', 'early text')
        const pending = ws.index('late', 'late text').catch((e) => e.name)
        await sleep(150)
        await ws.destroy()
        destroyed = true
        const outcome = await pending
        await sleep(800)
        if (late.length) throw new Error((first ? 'after a first write' : 'a fresh store') + ': sent after destroy(): ' + late.join(', ') + '; the call ' + outcome)
      }
      console.log('ok')
    })().catch((e) => { console.error(e.message); process.exit(1) })
  `
  const r = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, WORKSPACE_SEARCH_TEST_PAUSE: 'store-write:600' },
  })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout.trim(), 'ok')
})

test('a createIndex on its way when destroy() is called is answered before destroy() resolves (it reached the store after)', async () => {
  // The embedder's answer lets the runtime queue the store's createIndex, and the JavaScript thread destroys meanwhile.
  const busy = (ms) => { const end = Date.now() + ms; while (Date.now() < end); }
  let phase = 'before destroy()'
  const log = []
  const store = {
    async createIndex() { log.push(['createIndex', phase]) },
    async upsert() { log.push(['upsert', phase]) },
    async query() { return [] },
    async deleteVectors() {},
  }
  let ws
  const embedder = embedBatch(async (texts) => {
    let chain = Promise.resolve()
    for (let i = 0; i < 10; i++) chain = chain.then(() => {})
    chain.then(() => {
      busy(300)
      const p = ws.destroy()
      phase = 'destroy() called'
      p.then(() => { phase = 'destroy() resolved'; log.push(['destroy resolved']) })
    })
    return texts.map(() => [1, 0])
  })
  ws = new Workspace({ bm25: true, embedder, vectorStore: store })
  await ws.index('a', 'alpha text').catch(() => {})
  await sleep(500)
  assert.ok(log.some((l) => l[0] === 'destroy resolved'), JSON.stringify(log))
  assert.ok(log.every((l) => l[1] !== 'destroy() resolved'), `nothing reached the store after destroy() resolved: ${JSON.stringify(log)}`)
})
