// LocalVector, the embedded store, as a MastraVector on its own: the same
// round trip run against LibSQL, DuckDB and PgVector gives the same answers.
import { describe, test as nodeTest, before, after } from 'node:test'

const test = nodeTest
import assert from 'node:assert/strict'
import { lib } from './helpers.mjs'
import { makeStore, pgAvailable, PG_URL } from './vector-helpers.mjs'

const pgUp = await pgAvailable()
const unit = (v) => {
  const n = Math.hypot(...v)
  return v.map((x) => x / n)
}
const V = { a: unit([1, 0, 0, 0, 0, 0, 0, 1]), b: unit([0, 1, 0, 0, 0, 0, 1, 0]), c: unit([1, 1, 0, 0, 0, 0, 0, 0]) }

for (const kind of ['LocalVector', 'libsql', 'duckdb', 'pg']) {
  describe(`MastraVector round trip on ${kind}`, () => {
    // Skipped per test (not per suite), so that the summary counts them.
    const skip = kind === 'pg' && !pgUp ? `no PostgreSQL at ${PG_URL}` : false
    const test = (name, fn) => nodeTest(name, { skip }, fn)
    let store
    let close
    const indexName = `rt_${kind.toLowerCase()}_${process.pid}`
    before(async () => {
      if (skip) return
      ;({ store, close } = await makeStore(kind))
      await store.deleteIndex?.({ indexName }).catch(() => {})
    })
    after(async () => {
      if (skip) return
      await store.deleteIndex({ indexName }).catch(() => {})
      await close()
    })

    test('createIndex, upsert, query with and without filter, includeVector, describe, update, delete, list', async () => {
      await store.createIndex({ indexName, dimension: 8 })
      await store.createIndex({ indexName, dimension: 8 })
      const ids = await store.upsert({
        indexName,
        vectors: [V.a, V.b, V.c],
        metadata: [{ kind: 'x', n: 1 }, { kind: 'y', n: 2 }, { kind: 'x', n: 3, nested: { k: 'v' } }],
        ids: ['a', 'b', 'c'],
      })
      assert.deepEqual(ids, ['a', 'b', 'c'])
      const all = await store.query({ indexName, queryVector: V.a, topK: 3 })
      assert.deepEqual(all.map((h) => h.id), ['a', 'c', 'b'])
      assert.ok(Math.abs(all[0].score - 1) < 1e-5)
      assert.ok(Math.abs(all[1].score - 0.5) < 1e-5)
      assert.deepEqual(all[0].metadata, { kind: 'x', n: 1 })
      const filtered = await store.query({ indexName, queryVector: V.a, topK: 3, filter: { kind: 'x', n: { $gt: 1 } } })
      assert.deepEqual(filtered.map((h) => h.id), ['c'])
      assert.deepEqual((await store.query({ indexName, queryVector: V.a, topK: 3, filter: { 'nested.k': 'v' } })).map((h) => h.id), ['c'])
      const [withVector] = await store.query({ indexName, queryVector: V.b, topK: 1, includeVector: true })
      assert.equal(withVector.id, 'b')
      assert.ok(withVector.vector.every((x, i) => Math.abs(x - V.b[i]) < 1e-6))
      const stats = await store.describeIndex({ indexName })
      assert.deepEqual([stats.dimension, stats.count, stats.metric], [8, 3, 'cosine'])
      await store.updateVector({ indexName, id: 'b', update: { vector: V.a, metadata: { kind: 'z' } } })
      const updated = await store.query({ indexName, queryVector: V.a, topK: 2 })
      assert.deepEqual(updated.map((h) => h.id).sort(), ['a', 'b'])
      assert.deepEqual(updated.find((h) => h.id === 'b').metadata, { kind: 'z' })
      await store.deleteVector({ indexName, id: 'a' })
      await store.deleteVectors({ indexName, filter: { kind: 'z' } })
      assert.deepEqual((await store.query({ indexName, queryVector: V.a, topK: 3 })).map((h) => h.id), ['c'])
      await store.deleteVectors({ indexName, ids: ['c'] })
      assert.deepEqual(await store.query({ indexName, queryVector: V.a, topK: 3 }), [])
      assert.ok((await store.listIndexes()).includes(indexName))
      await store.deleteIndex({ indexName })
      assert.ok(!(await store.listIndexes()).includes(indexName))
    })
  })
}

test('LocalVector rejects bad calls with clear errors', async () => {
  const store = new lib.LocalVector({ id: 'v' })
  assert.equal(store.id, 'v')
  await assert.rejects(store.query({ indexName: 'none', queryVector: [1] }), /index "none" does not exist/)
  await store.createIndex({ indexName: 'ix', dimension: 2 })
  await assert.rejects(store.createIndex({ indexName: 'ix', dimension: 3 }), /already exists with dimension 2/)
  await assert.rejects(store.upsert({ indexName: 'ix', vectors: [[1, 2, 3]] }), /dimension 2, got a vector of dimension 3/)
  await assert.rejects(store.upsert({ indexName: 'ix', vectors: [[1, 'x']] }), /vectors: vector 1: element 1 is a string/)
  await assert.rejects(store.createIndex({ indexName: 'ix2', dimension: 0 }), /dimension must be an integer >= 1/)
  await assert.rejects(store.createIndex({ indexName: 'ix2', dimension: 2, metric: 'manhattan' }), /metric must be/)
  await assert.rejects(store.query({ indexName: 'ix', queryVector: [1, 0], filter: { a: { $regex: 'x' } } }), /filter is invalid/)
  await assert.rejects(store.deleteVectors({ indexName: 'ix' }), /either ids or filter/)
  await assert.rejects(store.upsert({ indexName: 'ix', vectors: [[1, 0]], typo: 1 }), /Unknown option 'typo'/)
  const [generated] = await store.upsert({ indexName: 'ix', vectors: [Float32Array.from([0, 1])] })
  assert.equal(typeof generated, 'string')
  assert.deepEqual((await store.query({ indexName: 'ix', queryVector: [0, 1] })).map((h) => h.id), [generated])
})

test('LocalVector.upsert with deleteFilter checks the new vectors before it deletes: a bad upsert deletes nothing', async () => {
  const store = new lib.LocalVector({ id: 'replace' })
  await store.createIndex({ indexName: 'r', dimension: 8 })
  await store.upsert({ indexName: 'r', vectors: [V.a, V.b], ids: ['a', 'b'], metadata: [{ file: 'x' }, { file: 'x' }] })
  const bad = { indexName: 'r', vectors: [[1, 2, 3]], ids: ['c'], metadata: [{ file: 'x' }], deleteFilter: { file: 'x' } }
  await assert.rejects(store.upsert(bad), /dimension|8/)
  await assert.rejects(store.upsert({ ...bad, vectors: [[...V.c.slice(0, 7), Number.NaN]] }), /finite/)
  const left = await store.query({ indexName: 'r', queryVector: V.a, topK: 10 })
  assert.deepEqual(left.map((r) => r.id).sort(), ['a', 'b'], 'both kept')
  await store.upsert({ ...bad, vectors: [V.c] })
  assert.deepEqual((await store.query({ indexName: 'r', queryVector: V.a, topK: 10 })).map((r) => r.id), ['c'], 'a good one replaces them')
})

test('LocalVector scans int8 codes and rescores exactly: the same answers and scores as the exact scan, options checked', async () => {
  assert.throws(() => new lib.LocalVector({ quantization: 'int4' }), /quantization must be 'int8' or 'none', got 'int4'/)
  assert.throws(() => new lib.LocalVector({ oversample: 0 }), /oversample must be an integer >= 1/)
  assert.throws(() => new lib.LocalVector({ oversample: 5000 }), /oversample must be at most 1000/)
  assert.throws(() => new lib.LocalVector({ oversample: 2, typo: 1 }), /Unknown option 'typo'/)
  let seed = 7
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1
  const dim = 96
  const vectors = Array.from({ length: 20000 }, () => Float32Array.from({ length: dim }, rnd))
  const ids = vectors.map((_, i) => `v${i}`)
  const metadata = vectors.map((_, i) => ({ tenth: i % 10 === 0 }))
  const exact = new lib.LocalVector({ quantization: 'none' })
  const int8 = new lib.LocalVector() // the default
  for (const s of [exact, int8]) {
    await s.createIndex({ indexName: 'q', dimension: dim })
    await s.upsert({ indexName: 'q', vectors, ids, metadata })
    await s.deleteVector({ indexName: 'q', id: 'v5' })
    await s.updateVector({ indexName: 'q', id: 'v6', update: { vector: vectors[7].map((x) => -x) } })
  }
  for (let i = 0; i < 20; i++) {
    const queryVector = Float32Array.from({ length: dim }, rnd)
    for (const filter of [undefined, { tenth: true }]) {
      const a = await exact.query({ indexName: 'q', queryVector, topK: 10, filter })
      const b = await int8.query({ indexName: 'q', queryVector, topK: 10, filter })
      assert.deepEqual(b, a)
      assert.equal(a.length, 10)
    }
  }
  for (const queryVector of [vectors[5], vectors[7]]) {
    const top = await int8.query({ indexName: 'q', queryVector, topK: 3 })
    assert.ok(!top.some((h) => h.id === 'v5' || h.id === 'v6'), 'deleted and changed vectors are not found where they were')
  }
})

async function settled(store, indexName) {
  for (let i = 0; i < 600; i++) {
    const { graph } = await store.describeIndex({ indexName })
    if (graph?.state === 'ready' && graph.pending === 0) return graph
    assert.notEqual(graph?.state, 'failed', graph?.error)
    await new Promise((r) => setTimeout(r, 50))
  }
  assert.fail('the graph did not catch up in 30 s')
}

test("LocalVector({ index: 'hnsw' }): a graph built and kept current on its own thread; exact scores, recall against the scan, writes found at once", async () => {
  assert.throws(() => new lib.LocalVector({ index: 'ivf' }), /index must be 'auto', 'hnsw' or 'flat', got 'ivf'/)
  assert.throws(() => new lib.LocalVector({ efSearch: 0 }), /efSearch must be an integer >= 1/)
  let seed = 11
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1
  const dim = 32
  const vectors = Array.from({ length: 4000 }, () => Float32Array.from({ length: dim }, rnd))
  const ids = vectors.map((_, i) => `v${i}`)
  const metadata = vectors.map((_, i) => ({ half: i % 2 === 0, n: i, tag: 'abcd'[i % 4] }))
  const flat = new lib.LocalVector({ index: 'flat' })
  const hnsw = new lib.LocalVector({ index: 'hnsw', efSearch: 128 })
  for (const s of [flat, hnsw]) {
    await s.createIndex({ indexName: 'g', dimension: dim })
    await s.upsert({ indexName: 'g', vectors, ids, metadata })
  }
  assert.equal((await flat.describeIndex({ indexName: 'g' })).graph, undefined)
  const graph = await settled(hnsw, 'g')
  assert.deepEqual(graph, { state: 'ready', removed: 0, pending: 0 })
  const recall = async (filter) => {
    let hits = 0
    for (let i = 0; i < 20; i++) {
      const queryVector = Float32Array.from({ length: dim }, rnd)
      const exact = await flat.query({ indexName: 'g', queryVector, topK: 10, filter })
      const got = await hnsw.query({ indexName: 'g', queryVector, topK: 10, filter })
      for (const h of got) {
        const e = exact.find((x) => x.id === h.id)
        if (e) {
          assert.equal(h.score, e.score, 'the exact similarity')
          hits++
        }
      }
    }
    return hits / 200
  }
  assert.ok((await recall()) >= 0.95)
  // Filters of every kind, applied during the graph search (or by the scan when selective).
  for (const filter of [{ half: true }, { n: { $lt: 2000 } }, { $or: [{ half: true }, { n: { $gte: 3990 } }] }, { tag: { $in: ['a', 'c'] } }, { n: { $lt: 40 } }]) {
    assert.ok((await recall(filter)) >= 0.95, JSON.stringify(filter))
  }
  // A topK past the index does not ask the graph for more than there is.
  assert.equal((await hnsw.query({ indexName: 'g', queryVector: vectors[0], topK: 1e9 })).length, 4000)
  // Written after the build: found before the graph's thread applies them.
  const fresh = Float32Array.from({ length: dim }, rnd)
  await hnsw.upsert({ indexName: 'g', vectors: [fresh], ids: ['fresh'] })
  await hnsw.deleteVector({ indexName: 'g', id: 'v1' })
  assert.equal((await hnsw.query({ indexName: 'g', queryVector: fresh, topK: 1 }))[0].id, 'fresh')
  assert.ok(!(await hnsw.query({ indexName: 'g', queryVector: vectors[1], topK: 5 })).some((h) => h.id === 'v1'))
  assert.equal((await settled(hnsw, 'g')).removed, 1)
  assert.equal((await hnsw.query({ indexName: 'g', queryVector: fresh, topK: 1 }))[0].id, 'fresh')
  // A workspace given this store reports its graph.
  const ws = new lib.Workspace({ bm25: true, vectorStore: hnsw, searchIndexName: 'g', embedder: async (texts) => texts.map(() => Array.from(fresh)) })
  await ws.init()
  assert.equal(ws.stats().vectorGraph?.state, 'ready')
  await ws.destroy()
})

test('LocalVector: a delete filter that matches everything by its form empties nothing; sizes past f32 are refused; dimensions are bounded', async () => {
  const store = new lib.LocalVector({ id: 'edges' })
  await store.createIndex({ indexName: 'i', dimension: 2 })
  await store.upsert({ indexName: 'i', vectors: [[1, 0], [0, 1], [1, 1]], ids: ['a', 'b', 'c'] })
  const everyByForm = [{}, null, { $and: [] }, { $nor: [] }, { $or: [{ k: 1 }, {}] }, { $nor: [{ $or: [] }] }, { id: { $nin: [] } }, { id: { $not: { $in: [] } } }]
  for (const filter of everyByForm) {
    await assert.rejects(store.deleteVectors({ indexName: 'i', filter }), (e) => e instanceof TypeError && /deleteIndex/.test(e.message), JSON.stringify(filter))
  }
  await store.upsert({ indexName: 'i', vectors: [[2, 2]], ids: ['d'], deleteFilter: {} })
  assert.equal((await store.describeIndex({ indexName: 'i' })).count, 4, 'an empty deleteFilter deletes nothing')
  // A filter that names something is taken at its word.
  await store.deleteVectors({ indexName: 'i', filter: { $nor: [{ $or: [] }, { k: { $exists: false } }] } })
  assert.equal((await store.describeIndex({ indexName: 'i' })).count, 4, 'no vector has metadata k: none deleted')
  // Lengths computed in f64: squares that overflow or underflow f32 still score right.
  const near = async (q) => (await store.query({ indexName: 'i', queryVector: q, topK: 1 }))[0]
  assert.deepEqual([(await near([2e19, 0])).id, (await near([2e19, 0])).score], ['a', 1])
  assert.equal((await near([1e-23, 0])).id, 'a')
  await assert.rejects(store.upsert({ indexName: 'i', vectors: [[3e38, 3e38]], ids: ['x'] }), /length within f32's range/)
  await assert.rejects(store.query({ indexName: 'i', queryVector: [3e38, 3e38] }), TypeError)
  await assert.rejects(store.createIndex({ indexName: 'huge', dimension: 1e12 }), RangeError)
})

test('a LocalVector wrapped in a Proxy, or an object made from one, is refused with a TypeError naming vectorStore (napi threw "Unwrap value from class failed")', () => {
  const { LocalVector, Workspace } = lib
  const lv = new LocalVector()
  for (const store of [new Proxy(lv, {}), Object.create(lv)]) {
    assert.throws(() => new Workspace({ bm25: true, embedder: async () => [1, 0], vectorStore: store }), (e) => e instanceof TypeError && /^vectorStore: a LocalVector wrapped in a Proxy/.test(e.message))
  }
  // The LocalVector itself is taken.
  assert.ok(new Workspace({ bm25: true, embedder: async () => [1, 0], vectorStore: lv }))
})
