// Vector and hybrid search with the real AI SDK (embed/embedMany over an
// offline EmbeddingModelV3) against every store: the embedded one,
// LocalVector, LibSQL, DuckDB and PostgreSQL with pgvector.
import { describe, test as nodeTest, before, after } from 'node:test'

const test = nodeTest
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { Workspace, LocalFilesystem, lib, tree, ids, toolPages, EmbedderError } from './helpers.mjs'
import { hashEmbed, cosine, hashModel, batchEmbedder, singleEmbedder, makeStore, pgAvailable, PG_URL } from './vector-helpers.mjs'

const DOCS = [
  { path: 'reset.md', content: 'How to reset your password\nopen the account settings\nclick reset password', metadata: { cat: 'account' } },
  { path: 'router.md', content: 'router setup guide for the home network', metadata: { cat: 'network' } },
  { path: 'manager.md', content: 'password manager tips and tricks', metadata: { cat: 'account' } },
  { path: 'pasta.md', content: 'cooking pasta at home', metadata: { cat: 'food' } },
  { path: 'login.md', content: 'sign in with your account password', metadata: { cat: 'account' } },
  { path: 'wifi.md', content: 'reset the wifi router to factory settings', metadata: { cat: 'network' } },
]

/** A BM25 + vector workspace over a store of `kind` (hash embeddings), released after the test. */
async function hashWorkspace(t, kind) {
  const { store, close } = await makeStore(kind)
  t.after(close)
  const ws = new Workspace({ bm25: true, embedder: async (text) => hashEmbed(text), ...(store ? { vectorStore: store } : {}) })
  t.after(() => ws.destroy())
  return ws
}

/** Expected vector-mode order: cosine of the hash embeddings, ties by id. */
function expectedVector(docs, query, k) {
  const q = hashEmbed(query)
  return docs
    .map((d) => ({ id: d.path, score: cosine(q, hashEmbed(d.content)) }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
    .slice(0, k)
}

const pgUp = await pgAvailable()
if (!pgUp && process.env.CI) throw new Error(`PostgreSQL with pgvector is not reachable at ${PG_URL}; .ci/run starts it`)
const STORES = ['embedded', 'LocalVector', 'libsql', 'duckdb', 'pg']
let names = 0
const indexName = (kind) => `wss_${kind.toLowerCase()}_${process.pid}_${names++}`

for (const kind of STORES) {
  describe(`vector and hybrid search on ${kind}`, () => {
    // Skipped per test (not per suite), so that the summary counts them.
    const skip = kind === 'pg' && !pgUp ? `no PostgreSQL with pgvector at ${PG_URL}` : false
    const test = (name, fn) => nodeTest(name, { skip }, fn)
    let store
    let close
    before(async () => {
      if (skip) return
      ;({ store, close } = await makeStore(kind))
    })
    after(async () => !skip && close?.())

    const workspace = (options = {}) => {
      const { embedder } = options.embedder ? options : batchEmbedder(hashModel(), { maxBatchSize: 4 })
      return new Workspace({ bm25: true, embedder, ...(store ? { vectorStore: store } : {}), searchIndexName: indexName(kind), ...options })
    }

    /** What the store holds for this workspace's index: id -> text. */
    async function storeContents(ws, indexNameUsed) {
      if (!store) return null
      const hits = await store.query({ indexName: indexNameUsed, queryVector: hashEmbed('anything at all'), topK: 1000 })
      return Object.fromEntries(hits.map((h) => [h.metadata?.id ?? h.id, h.metadata?.text]))
    }

    test('vector mode: exact cosine order, score clamped to [0, 1], raw in scoreDetails, ties by id', async () => {
      const ws = workspace()
      assert.deepEqual([ws.canBM25, ws.canVector, ws.canHybrid], [true, true, true])
      await ws.indexMany(DOCS)
      const results = await ws.search('reset password', { mode: 'vector', topK: 6 })
      const expected = expectedVector(DOCS, 'reset password', 6)
      assert.deepEqual(ids(results), ids(expected))
      for (const [r, e] of results.map((r, i) => [r, expected[i]])) {
        assert.ok(Math.abs(r.scoreDetails.vector - e.score) < 1e-5, `${r.id}: ${r.scoreDetails.vector} vs ${e.score}`)
        assert.equal(r.score, Math.min(1, Math.max(0, r.scoreDetails.vector)))
        assert.equal(r.scoreDetails.bm25, undefined)
        assert.equal(r.content, DOCS.find((d) => d.path === r.id).content)
        assert.deepEqual(r.metadata, DOCS.find((d) => d.path === r.id).metadata)
      }
      assert.deepEqual(results[0].lineRange, { start: 1, end: 3 })
    })

    test('a document whose vector is all zeros (no direction: PgVector scores it NaN) ranks last or not at all, and every search still answers', async (t) => {
      const embedder = Object.assign(async (texts) => texts.map((text) => (text.includes('zeroed') ? new Array(64).fill(0) : hashEmbed(text))), { batch: true })
      const ws = workspace({ embedder })
      t.after(() => ws.destroy())
      await ws.indexMany([{ path: 'a.md', content: 'alpha beta' }, { path: 'b.md', content: 'alpha gamma' }, { path: 'z.md', content: 'zeroed alpha' }])
      for (const mode of ['vector', 'hybrid']) {
        const results = await ws.search('alpha beta', { mode, topK: 10 })
        assert.deepEqual(ids(results).slice(0, 2), ['a.md', 'b.md'], mode)
        const zero = results.find((r) => r.id === 'z.md')
        // (The raw score is the store's: 0 where it answered NaN, -1 in DuckDB.)
        if (mode === 'vector' && zero) assert.deepEqual([ids(results).at(-1), zero.score, Number.isFinite(zero.scoreDetails.vector)], ['z.md', 0, true], `${mode}: last, scored 0`)
        if (mode === 'hybrid') assert.ok(zero, 'hybrid: found by its words')
      }
    })

    test('unindex() of a document never written, on a store written to by no one yet, resolves false (LibSQL and DuckDB rejected: no such table)', async (t) => {
      const ws = workspace()
      t.after(() => ws.destroy())
      assert.equal(await ws.unindex('never.md'), false)
      assert.equal(await ws.removeByPrefix('never'), 0)
      await ws.index('a.md', 'alpha text')
      assert.equal(await ws.unindex('a.md'), true)
      assert.equal(await ws.unindex('a.md'), false)
    })

    test("a metadata key `_startLineOffset` of the user's does not shift vector hits' lines (it was read as the document's line offset)", async (t) => {
      const ws = workspace()
      t.after(() => ws.destroy())
      await ws.index('own.md', 'one\ntwo\nthe heron line', { metadata: { _startLineOffset: 100, author: 'x' } })
      await ws.index('chunk.md', 'one\nthe heron line', { startLineOffset: 40 })
      for (const mode of ['vector', 'hybrid', 'bm25']) {
        const hits = await ws.search('heron', { mode, topK: 5 })
        const own = hits.find((h) => h.id === 'own.md')
        assert.deepEqual(own.lineRange, { start: 3, end: 3 }, mode)
        assert.equal(own.metadata.author, 'x', mode)
        assert.deepEqual(hits.find((h) => h.id === 'chunk.md').lineRange, { start: 41, end: 41 }, mode)
      }
    })

    test('a top-level $not (a logical operator of Mastra\'s filters) in every mode (it was refused: "unknown operator $not at the top level")', async (t) => {
      const ws = workspace()
      t.after(() => ws.destroy())
      await ws.indexMany(DOCS)
      const want = DOCS.filter((d) => d.metadata.cat !== 'account').map((d) => d.path).sort()
      for (const mode of ['vector', 'hybrid', 'bm25']) {
        const hits = await ws.search('reset password router pasta home wifi', { mode, topK: 10, filter: { $not: { cat: 'account' } } })
        assert.deepEqual(ids(hits).sort(), want, mode)
      }
    })

    test('hybrid: weighted sum of the clamped cosine and BM25 over its best match; rrf', async () => {
      const ws = workspace()
      await ws.indexMany(DOCS)
      const best = (await ws.search('reset password', { mode: 'bm25', topK: 1 }))[0].scoreDetails.bm25
      for (const vectorWeight of [0.5, 0.7, 0, 1]) {
        const results = await ws.search('reset password', { topK: 6, vectorWeight })
        assert.ok(results.length > 0)
        for (const r of results) {
          const v = Math.min(1, Math.max(0, r.scoreDetails.vector ?? 0))
          const b = (r.scoreDetails.bm25 ?? 0) / best
          assert.ok(Math.abs(r.score - (vectorWeight * v + (1 - vectorWeight) * b)) < 1e-9, `${r.id} at ${vectorWeight}`)
        }
        for (let i = 1; i < results.length; i++) assert.ok(results[i - 1].score >= results[i].score)
      }
      const hybrid = await ws.search('reset password', { topK: 3 })
      assert.equal(hybrid[0].id, 'reset.md')
      assert.ok(hybrid[0].scoreDetails.bm25 > 0 && hybrid[0].scoreDetails.vector > 0)
      const rrf = await ws.search('reset password', { topK: 6, fusion: 'rrf' })
      assert.equal(rrf[0].id, 'reset.md')
      assert.ok(Math.abs(rrf[0].score - 1) < 1e-12, 'first in both lists scores 1')
      assert.ok(rrf.every((r) => r.score > 0 && r.score <= 1))
    })

    test('filter applies to both halves', async () => {
      const ws = workspace()
      await ws.indexMany(DOCS)
      for (const mode of ['vector', 'hybrid', 'bm25']) {
        const results = await ws.search('reset password router', { mode, topK: 10, filter: { cat: 'network' } })
        assert.ok(results.length > 0, mode)
        assert.ok(results.every((r) => r.metadata.cat === 'network'), `${mode}: ${ids(results)}`)
      }
      const some = await ws.search('password', { topK: 10, filter: { cat: { $in: ['food', 'account'] } } })
      assert.ok(some.every((r) => ['food', 'account'].includes(r.metadata.cat)))
    })

    test('init() indexes files: chunks with sourceFile and file lines; rebuild removes vectors of deleted files', async (t) => {
      const long = Array.from({ length: 120 }, (_, i) => (i === 100 ? 'the hidden treasure map is here' : `filler line number ${i} with some words in it`)).join('\n')
      const dir = tree(t, { 'docs/big.md': long, 'docs/small.md': 'a small note about treasure', 'docs/gone.md': 'this file will be deleted soon treasure' })
      const name = indexName(kind)
      const ws = workspace({ filesystem: new LocalFilesystem({ basePath: dir }), autoIndexPaths: ['docs'], searchIndexName: name })
      const report = await ws.init()
      assert.equal(report.indexed, 3)
      assert.ok(report.chunks >= 2)
      const results = await ws.search('hidden treasure map', { mode: 'vector', topK: 10 })
      const chunk = results.find((r) => r.id.startsWith('docs/big.md#chunk-'))
      assert.ok(chunk, ids(results).join())
      assert.equal(chunk.metadata.sourceFile, 'docs/big.md')
      assert.deepEqual(chunk.lineRange, { start: 101, end: 101 })
      assert.equal(ws.stats().vectors, report.chunks + 2)
      const before = await storeContents(ws, name)
      if (before) assert.equal(Object.keys(before).length, report.chunks + 2)

      fs.rmSync(path.join(dir, 'docs/gone.md'))
      fs.writeFileSync(path.join(dir, 'docs/big.md'), 'now a small file about treasure')
      const again = await ws.rebuildSearchIndex()
      assert.equal(again.indexed, 2)
      assert.equal(again.chunks, 0)
      const after = await ws.search('treasure', { mode: 'vector', topK: 50 })
      assert.deepEqual(ids(after).sort(), ['docs/big.md', 'docs/small.md'])
      assert.equal(ws.stats().vectors, 2)
      const stored = await storeContents(ws, name)
      if (stored) assert.deepEqual(Object.keys(stored).sort(), ['docs/big.md', 'docs/small.md'])
    })

    test('a failed index() changes nothing: the previous version stays, in BM25 and in the store', async () => {
      class ProviderError extends Error {
        code = 'E_PROVIDER'
        status = 429
      }
      const thrown = new ProviderError('rate limited')
      const { embedder } = batchEmbedder(hashModel(), {
        fail: (text) => {
          if (text.includes('FAIL')) throw thrown
        },
      })
      const name = indexName(kind)
      const ws = workspace({ embedder, searchIndexName: name })
      await ws.index('doc', 'original alpha text')
      await assert.rejects(ws.index('doc', 'FAIL replacement beta text'), (err) => err === thrown && err.code === 'E_PROVIDER' && err.status === 429)
      assert.deepEqual(ids(await ws.search('alpha', { mode: 'bm25' })), ['doc'])
      assert.deepEqual(await ws.search('beta', { mode: 'bm25' }), [])
      const [hit] = await ws.search('alpha', { mode: 'vector', topK: 1 })
      assert.equal(hit.content, 'original alpha text')
      const stored = await storeContents(ws, name)
      if (stored) assert.deepEqual(stored, { doc: 'original alpha text' })
    })

    test('indexMany: a failed embedder group keeps its documents at their previous version, every other group is written; the error carries the report', async () => {
      const { embedder } = batchEmbedder(hashModel(), {
        maxBatchSize: 10,
        fail: (text) => {
          if (text.includes('FAIL')) throw new Error(`provider refused: ${text}`)
        },
      })
      const ws = workspace({ embedder })
      await ws.index('d120', 'previous version of document 120')
      const docs = Array.from({ length: 150 }, (_, i) => ({ path: `d${i}`, content: i === 125 ? 'FAIL here' : `document number ${i} text` }))
      await assert.rejects(ws.indexMany(docs), (err) => {
        assert.equal(err.message, 'provider refused: FAIL here')
        // Groups of 10: d120-d129 failed with d125, the 14 other groups are written (SPEC 8).
        assert.equal(err.report.indexed, 140)
        assert.deepEqual(err.report.failed.map((f) => f.path), Array.from({ length: 10 }, (_, i) => `d${120 + i}`))
        assert.deepEqual(err.report.failed[0], { path: 'd120', error: 'provider refused: FAIL here' })
        return true
      })
      assert.equal((await ws.search('previous version', { mode: 'bm25' }))[0].id, 'd120')
      const [v] = await ws.search('previous version of document 120', { mode: 'vector', topK: 1 })
      assert.equal(v.content, 'previous version of document 120')
      assert.equal((await ws.search('document number 131', { mode: 'bm25', topK: 1 }))[0].id, 'd131')
      assert.equal(ws.stats().documents, 141)
      assert.equal(ws.stats().vectors, 141)
    })

    test('unindex() and clear() remove this workspace\'s vectors, and nothing else', async () => {
      const name = indexName(kind)
      const ws = workspace({ searchIndexName: name })
      await ws.indexMany(DOCS)
      if (store) await store.upsert({ indexName: name, vectors: [hashEmbed('foreign data')], metadata: [{ id: 'foreign', text: 'foreign data' }], ids: ['foreign'] })
      assert.equal(await ws.unindex('reset.md'), true)
      assert.ok(!ids(await ws.search('reset password', { mode: 'vector', topK: 10 })).includes('reset.md'))
      assert.equal(ws.stats().vectors, DOCS.length - 1)
      await ws.clear()
      assert.equal(ws.stats().vectors, 0)
      const left = await storeContents(ws, name)
      if (left) assert.deepEqual(Object.keys(left), ['foreign'])
    })
  })
}

describe('embedders', () => {
  test('batch: groups of at most maxBatchSize, at most embedConcurrency in flight, order kept', async () => {
    const model = hashModel({ maxEmbeddingsPerCall: 2 })
    const { embedder, rec } = batchEmbedder(model, { maxBatchSize: 3 })
    const ws = new Workspace({ bm25: true, embedder, embedConcurrency: 2 })
    const docs = Array.from({ length: 20 }, (_, i) => ({ path: `p${String(i).padStart(2, '0')}`, content: `text ${i} ${i % 3 ? 'odd' : 'even'} words` }))
    await ws.indexMany(docs)
    assert.deepEqual(rec.calls, [3, 3, 3, 3, 3, 3, 2])
    assert.equal(rec.maxInFlight, 2)
    assert.ok(model.calls.every((n) => n <= 2), 'embedMany split by the model limit')
    const results = await ws.search('text 7 odd words', { mode: 'vector', topK: 5 })
    assert.deepEqual(ids(results), ids(expectedVector(docs, 'text 7 odd words', 5)))
    // Queries and index() use the batch path too.
    await ws.index('extra', 'one more')
    assert.deepEqual(rec.calls.slice(-2), [1, 1])
  })

  test('maxBatchSize: floored when finite and >= 1, else 256', async () => {
    for (const [maxBatchSize, expected] of [[2.7, 2], [0, 256], [-1, 256], [NaN, 256], [Infinity, 256], ['2', 256], [undefined, 256]]) {
      const calls = []
      const embedder = Object.assign(async (texts) => {
        calls.push(texts.length)
        return texts.map((t) => hashEmbed(t, 8))
      }, { batch: true, maxBatchSize })
      const ws = new Workspace({ embedder })
      await ws.indexMany(Array.from({ length: 300 }, (_, i) => ({ path: `x${i}`, content: `t${i}` })))
      assert.equal(calls[0], Math.min(expected, 300), String(maxBatchSize))
    }
  })

  test('single-text embedder (the AI SDK\'s embed): one call per text, 8 in flight by default', async () => {
    const { embedder, rec } = singleEmbedder(hashModel())
    const ws = new Workspace({ bm25: true, embedder })
    assert.equal(embedder.batch, undefined)
    await ws.indexMany(Array.from({ length: 30 }, (_, i) => ({ path: `s${i}`, content: `single ${i}` })))
    assert.equal(rec.calls.length, 30)
    assert.ok(rec.calls.every((n) => n === 1))
    assert.equal(rec.maxInFlight, 8)
    assert.equal((await ws.search('single 3', { mode: 'vector', topK: 1 }))[0].id, 's3')
  })

  test('Float32Array vectors and synchronous embedders are accepted', async () => {
    const ws = new Workspace({ embedder: Object.assign((texts) => texts.map((t) => Float32Array.from(hashEmbed(t))), { batch: true }) })
    await ws.indexMany([{ path: 'a', content: 'alpha beta' }, { path: 'b', content: 'gamma delta' }])
    assert.equal((await ws.search('gamma delta', { topK: 1 }))[0].id, 'b')
  })

  test('every embedder answer is checked; the message names the batch and what was wrong', async () => {
    const cases = [
      [(texts) => texts.slice(1).map((t) => hashEmbed(t)), /Batch embedder returned 2 embeddings for 3 inputs \(batch 1 of 1, texts 1-3\)/],
      [(texts) => texts.map((t, i) => hashEmbed(t, i === 1 ? 32 : 64)), /different dimensions \(batch 1 of 1, texts 1-3\): vector 2 has 32/],
      [(texts) => texts.map(() => [0.1, NaN]), /non-finite number \(batch 1 of 1, texts 1-3\): vector 1, element 1/],
      [() => 'vectors', /invalid value \(batch 1 of 1, texts 1-3\): expected an array of vectors, got a string/],
      [(texts) => texts.map(() => [1, 'two']), /invalid value \(batch 1 of 1, texts 1-3\): vector 1: element 1 is a string/],
      [async (texts) => texts.map(() => ({})), /invalid value \(batch 1 of 1, texts 1-3\): vector 1: expected number\[\] or Float32Array, got an object/],
      // The second text's vector is vector 2 whatever is wrong with it; numbers as JavaScript writes them.
      [(texts) => texts.map((t, i) => (i === 1 ? [NaN, 1] : [1, 0])), /non-finite number \(batch 1 of 1, texts 1-3\): vector 2, element 0 is NaN\./],
      [(texts) => texts.map((t, i) => (i === 1 ? ['x', 1] : [1, 0])), /invalid value \(batch 1 of 1, texts 1-3\): vector 2: element 0 is a string/],
      [(texts) => texts.map((t, i) => (i === 1 ? [Infinity, 1] : [1, 0])), /non-finite number \(batch 1 of 1, texts 1-3\): vector 2, element 0 is Infinity\./],
      [(texts) => texts.map((t, i) => (i === 1 ? [1e39, 1] : [1, 0])), /invalid value \(batch 1 of 1, texts 1-3\): vector 2: element 0 is 1e\+39, beyond a 32-bit float's range/],
    ]
    for (const [fn, message] of cases) {
      const ws = new Workspace({ bm25: true, embedder: Object.assign(fn, { batch: true }) })
      const docs = [{ path: 'a', content: 'x' }, { path: 'b', content: 'y' }, { path: 'c', content: 'z' }]
      await assert.rejects(ws.indexMany(docs), (e) => e instanceof EmbedderError && e.code === 'EMBEDDER' && e.workspaceId === ws.id && message.test(e.message) && e.report.failed.length === 3)
      assert.equal(ws.stats().documents, 0)
    }
    const empty = new Workspace({ embedder: Object.assign(async () => [], { batch: true }) })
    await assert.rejects(empty.index('a', 'x'), { name: 'EmbedderError', message: /Batch embedder returned no embedding for input text/ })
    const single = new Workspace({ embedder: async () => 'one' })
    await assert.rejects(single.index('a', 'x'), { name: 'EmbedderError', message: /^Embedder returned an invalid value \(index\(\)\): / })
  })

  test('a throw or rejection inside the embedder reaches the caller as the same Error object', async () => {
    const sync = new TypeError('sync throw')
    const ws1 = new Workspace({ embedder: () => { throw sync } })
    await assert.rejects(ws1.index('a', 'x'), (err) => err === sync)
    await assert.rejects(ws1.search('x'), (err) => err === sync)
    const custom = Object.assign(new RangeError('async reject'), { retryAfter: 30 })
    const ws2 = new Workspace({ bm25: true, embedder: Object.assign(async () => { throw custom }, { batch: true }) })
    await assert.rejects(ws2.search('x', { mode: 'hybrid' }), (err) => err === custom && err.retryAfter === 30)
    // One whose message reads like the addon's own marks is handed back as it was too (one became an
    // EmbedderError, another an internal error).
    for (const message of ['\0workspace-search-class:EmbedderError:spoofed', '\0workspace-search-class:tenantPool:x', '\0snapshot-store:store:x']) {
      const own = new Error(message)
      const ws3 = new Workspace({ embedder: async () => { throw own } })
      await assert.rejects(ws3.index('a', 'x'), (err) => err === own, JSON.stringify(message))
    }
  })
})

describe('hybrid ranking across topK', () => {
  test("every topK and every page of the search tool are cut from one hybrid ranking, in both fusions (halves read as deep as topK re-ordered the first results: pages overlapped, files were never shown)", async (t) => {
    // 600 files holding the query's words 0-12 times each, other words around them.
    const files = {}
    for (let i = 0; i < 600; i++) {
      files[`m${String(i).padStart(3, '0')}.txt`] = `${'kaft '.repeat((i * 7919) % 13)}${'lume '.repeat((i * 104729) % 5)}filler w${i % 37} v${i % 11}\n`
    }
    const dir = tree(t, files)
    const ws = new Workspace({
      filesystem: new LocalFilesystem({ basePath: dir }),
      bm25: true,
      autoIndexPaths: ['.'],
      embedder: async (text) => hashEmbed(text),
    })
    t.after(() => ws.destroy())
    await ws.init()
    for (const fusion of ['weighted', 'rrf']) {
      for (const group of [undefined, 'file']) {
        const all = (await ws.search('kaft lume', { topK: 600, fusion, group })).map((r) => r.id)
        assert.equal(new Set(all).size, all.length)
        for (const topK of [10, 51, 101, 199, 201, 399, 401]) {
          const got = (await ws.search('kaft lume', { topK, fusion, group })).map((r) => r.id)
          assert.deepEqual(got, all.slice(0, topK), `${fusion} ${group} topK ${topK}`)
        }
      }
    }
    // The tool's pages (topK skip + 51 each, hybrid by default) partition the file ranking.
    const shown = await toolPages(ws, 'kaft lume')
    assert.equal(shown.length, 600)
    assert.deepEqual(shown, (await ws.search('kaft lume', { topK: 600, group: 'file' })).map((r) => r.id))
  })
})

describe('hybrid ranking across topK, with a store that ties, repeats and fails', () => {
  /** A store over rows in memory: every score `score(i)`, ties answered last written first (as LibSQL and DuckDB). */
  const fakeStore = ({ score = () => 0.9, twice = -1 } = {}) => {
    const rows = []
    const names = new Set()
    return {
      failDelete: false,
      async createIndex({ indexName }) { names.add(indexName) },
      async listIndexes() { return [...names] },
      async upsert({ ids, metadata }) { ids.forEach((id, i) => rows.push({ id, metadata: metadata[i] })) },
      async query({ topK }) {
        const hits = [...rows].reverse().map((r, i) => ({ id: r.id, score: score(rows.length - 1 - i), metadata: r.metadata }))
        hits.sort((a, b) => b.score - a.score)
        if (twice >= 0 && hits.length > 250) hits.splice(250, 0, { ...hits.find((h) => h.id === `d${String(twice).padStart(3, '0')}`) })
        return hits.slice(0, topK)
      },
      async deleteVectors() { if (this.failDelete) throw new Error('ECONNRESET: connection reset') },
    }
  }
  const open = async (t, store) => {
    const ws = new Workspace({ bm25: true, embedder: Object.assign(async (texts) => texts.map(() => [1, 0]), { batch: true }), vectorStore: store })
    t.after(() => ws.destroy())
    await ws.indexMany(Array.from({ length: 300 }, (_, i) => ({ path: `d${String(i).padStart(3, '0')}`, content: `zzz unrelated ${i}` })))
    return ws
  }
  const first = async (ws, topK) => (await ws.search('nomatchword', { mode: 'hybrid', topK })).map((h) => h.id)

  test('tied vector scores across a tier\'s edge: the tie is read whole and taken by id (the store chose which tied rows made the first tier)', async (t) => {
    const ws = await open(t, fakeStore())
    const all = await first(ws, 300)
    assert.deepEqual(all.slice(0, 3), ['d000', 'd001', 'd002'])
    for (const topK of [10, 150, 201]) assert.deepEqual(await first(ws, topK), all.slice(0, topK), `topK ${topK}`)
  })

  test('an id the store answers twice keeps its first row (a second row found only deeper moved it to a later tier)', async (t) => {
    const ws = await open(t, fakeStore({ score: (i) => 1 - i / 1000, twice: 5 }))
    const all = await first(ws, 300)
    assert.equal(new Set(all).size, all.length)
    assert.deepEqual(await first(ws, 10), all.slice(0, 10))
    assert.ok(all.indexOf('d005') < 10)
  })

  test('unindex() of a document this workspace never wrote: a store that fails rejects it (it resolved false, the vector left in place); one with no index yet resolves false', async (t) => {
    const store = fakeStore()
    const failing = await open(t, store)
    store.failDelete = true
    await assert.rejects(failing.unindex('old.md'), /ECONNRESET/)
    const empty = new Workspace({ bm25: true, embedder: async () => [1, 0], vectorStore: Object.assign(fakeStore(), { failDelete: true }) })
    t.after(() => empty.destroy())
    assert.equal(await empty.unindex('old.md'), false)
  })
})

describe('configuration', () => {
  test('modes: hybrid by default with both; vector alone; unconfigured modes rejected as Mastra', async () => {
    const { embedder } = batchEmbedder(hashModel())
    const vectorOnly = new Workspace({ embedder })
    assert.deepEqual([vectorOnly.canBM25, vectorOnly.canVector, vectorOnly.canHybrid], [false, true, false])
    await vectorOnly.index('a', 'alpha text')
    const [r] = await vectorOnly.search('alpha text')
    assert.deepEqual(Object.keys(r.scoreDetails), ['vector'])
    await assert.rejects(vectorOnly.search('x', { mode: 'bm25' }), { message: 'BM25 search requires BM25 configuration.' })
    await assert.rejects(vectorOnly.search('x', { mode: 'hybrid' }), { message: 'Hybrid search requires both vector and BM25 configuration.' })
    const both = new Workspace({ bm25: true, embedder })
    await both.index('a', 'alpha text')
    const [h] = await both.search('alpha')
    assert.ok(h.scoreDetails.bm25 > 0 && h.scoreDetails.vector > 0, 'hybrid by default')
    // A query without tokens: bm25 finds nothing, the vector half still embeds it.
    assert.deepEqual(await both.search('the', { mode: 'bm25' }), [])
    assert.equal((await both.search('the', { mode: 'vector' })).length, 1)
    assert.deepEqual(await both.search(''), [])
    // Spaces alone are an empty query too, in every mode: the embedder is not asked.
    const asked = []
    const counting = new Workspace({ bm25: true, embedder: async (text) => { asked.push(text); return [1, 0, 0] } })
    await counting.index('a', 'alpha text')
    const before = asked.length
    for (const mode of ['vector', 'hybrid', 'bm25']) assert.deepEqual(await counting.search(' \n\t ', { mode }), [], mode)
    assert.equal(asked.length, before, 'the embedder was not asked for a query of spaces')
  })

  test('searchIndexName: Mastra\'s rules and messages, only with vector search', () => {
    const { embedder } = batchEmbedder(hashModel())
    const check = (options, message, workspaceId) =>
      assert.throws(() => new Workspace({ embedder, ...options }), (err) => err instanceof lib.WorkspaceError && err.code === 'INVALID_SEARCH_CONFIG' && err.message === message && err.workspaceId === workspaceId)
    check({ id: 'w', searchIndexName: 'bad-name' }, 'Invalid searchIndexName: "bad-name". Must start with a letter or underscore, and contain only letters, numbers, or underscores.', 'w')
    check({ id: 'w', searchIndexName: '' }, 'Invalid searchIndexName: "". Must start with a letter or underscore, and contain only letters, numbers, or underscores.', 'w')
    check({ id: 'w', searchIndexName: 'x'.repeat(64) }, 'searchIndexName exceeds 63 characters (got 64)', 'w')
    check({ id: '123' }, 'Invalid searchIndexName: "123_search". Must start with a letter or underscore, and contain only letters, numbers, or underscores.', '123')
    check({ id: 'a'.repeat(57) }, 'searchIndexName exceeds 63 characters (got 64)', 'a'.repeat(57))
    assert.equal(new Workspace({ embedder, id: 'my-ws.id' }).canVector, true)
    assert.equal(new Workspace({ embedder, searchIndexName: 'x'.repeat(63) }).canVector, true)
    assert.throws(() => new Workspace({ embedder, vectorStore: { upsert() {} } }), /vectorStore.query must be a function/)
    assert.throws(() => new Workspace({ embedder: 'embed' }), /embedder must be a function/)
  })

  test('a search sent beside the first write to a fresh LibSQL store answers (as before the write, or after it), not the missing table, whichever call the store gets first', async (t) => {
    const { LibSQLVector } = await import('@mastra/libsql')
    const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
    for (const first of ['query', 'createIndex']) {
      const real = new LibSQLVector({ id: 'race', url: ':memory:' })
      t.after(() => real.close?.())
      let created
      const madeIndex = new Promise((resolve) => (created = resolve))
      const sent = []
      // The query reaches the store before the table is made, and its failure comes back once it is.
      const store = {
        createIndex: async (args) => {
          sent.push('createIndex')
          await sleep(first === 'createIndex' ? 50 : 0)
          const answer = await real.createIndex(args)
          created()
          return answer
        },
        upsert: (args) => real.upsert(args),
        listIndexes: () => real.listIndexes(),
        query: async (args) => {
          sent.push('query')
          const answer = await real.query(args).then((hits) => ({ hits }), (error) => ({ error }))
          await madeIndex
          if (answer.error) throw answer.error
          return answer.hits
        },
      }
      // The text embedded first goes first: the query's, or the document's.
      const late = first === 'query' ? 'alpha bravo' : 'alpha'
      const embedder = async (text) => {
        if (text === late) await sleep(first === 'query' ? 30 : 10)
        return hashEmbed(text)
      }
      const ws = new Workspace({ id: `race-${first}`, bm25: true, embedder, vectorStore: store })
      t.after(() => ws.destroy())
      const search = ws.search('alpha', { mode: 'vector' })
      await ws.index('a.md', 'alpha bravo')
      const hits = (await search).map((r) => r.id)
      assert.equal(sent[0], first, `${first}: the store got it first`)
      assert.ok(hits.length === 0 || (hits.length === 1 && hits[0] === 'a.md'), `${first}: ${JSON.stringify(hits)}`)
      assert.deepEqual((await ws.search('alpha', { mode: 'vector' })).map((r) => r.id), ['a.md'])
    }
  })

  test('store calls as Mastra: this bound, createIndex once before the first upsert, at most 100 vectors per upsert, metadata { ...metadata, id, text }', async (t) => {
    const { LibSQLVector } = await import('@mastra/libsql')
    const real = new LibSQLVector({ id: 'rec', url: ':memory:' })
    t.after(() => real.close?.())
    const calls = []
    // A recording wrapper: every call goes to the real store, with `this` checked.
    const store = {
      async createIndex(args) {
        assert.equal(this, store)
        calls.push(['createIndex', args])
        return real.createIndex(args)
      },
      async upsert(args) {
        assert.equal(this, store)
        calls.push(['upsert', args.vectors.length, args.ids.slice(0, 1), args.metadata[0]])
        return real.upsert(args)
      },
      async query(args) {
        calls.push(['query', args.topK, args.filter])
        return real.query(args)
      },
    }
    const { embedder } = batchEmbedder(hashModel(), { maxBatchSize: 64 })
    const ws = new Workspace({ id: 'rec-ws', bm25: true, embedder, vectorStore: store })
    await ws.index('/docs/one.md', 'first document', { metadata: { cat: 'x' }, type: 'text', startLineOffset: 5 })
    await ws.indexMany(Array.from({ length: 230 }, (_, i) => ({ path: `m${i}`, content: `many ${i}` })))
    assert.deepEqual(calls[0], ['createIndex', { indexName: 'rec_ws_search', dimension: 64 }])
    assert.deepEqual(calls[1], ['upsert', 1, ['/docs/one.md'], { id: '/docs/one.md', text: 'first document', type: 'text', cat: 'x', _startLineOffset: 5 }])
    assert.deepEqual(calls.slice(2).map((c) => c.slice(0, 2)), [['upsert', 100], ['upsert', 100], ['upsert', 30]])
    await ws.search('many', { topK: 4, filter: { cat: 'x' } })
    // Hybrid asks each half for 200 candidates (its first tier), or as deep as topK in doubled tiers; the vector half one more (a tie at the cut).
    assert.deepEqual(calls.at(-1), ['query', 201, { cat: 'x' }])
    await ws.search('many', { topK: 401, filter: { cat: 'x' } })
    assert.deepEqual(calls.at(-1), ['query', 801, { cat: 'x' }])
    await ws.search('many', { topK: 3, mode: 'vector' })
    // One past topK; the 230 "many N" tie with the query, so deeper: to 16 x topK or topK + 100.
    assert.deepEqual(calls.filter((c) => c[0] === 'query').slice(-6).map((c) => c[1]), [4, 8, 16, 32, 64, 103])
    await ws.search('first document', { topK: 1, mode: 'vector' })
    assert.deepEqual(calls.at(-1), ['query', 2, undefined], 'no tie at the cut: one ask')
    const [hit] = await ws.search('first document', { mode: 'vector', topK: 1 })
    assert.deepEqual(hit.metadata, { type: 'text', cat: 'x' })
  })

  test('init(): a file whose embedding fails is reported and has no vectors; it stays in keyword search', async (t) => {
    const dir = tree(t, { 'a.md': 'good file one', 'b.md': 'POISON file', 'c.md': 'good file three' })
    const { embedder } = batchEmbedder(hashModel(), {
      maxBatchSize: 8,
      fail: (text) => {
        if (text.includes('POISON')) throw new Error('cannot embed poison')
      },
    })
    const events = []
    const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, embedder, autoIndexPaths: ['.'], onProgress: (e) => events.push(e) })
    const report = await ws.init()
    assert.equal(ws.status, 'ready')
    const embed = events.filter((e) => e.phase === 'embed')
    assert.ok(embed.length > 0 && embed.every((e) => e.done <= e.total && e.total === 3), JSON.stringify(events))
    assert.equal(report.indexed, 3)
    assert.deepEqual(report.failed, [{ path: 'b.md', error: 'vectors not written: cannot embed poison (the file is indexed for keyword search, and embedded again at the next init())' }])
    assert.deepEqual(ids(await ws.search('file', { mode: 'bm25', topK: 10 })).sort(), ['a.md', 'b.md', 'c.md'])
    assert.deepEqual(ids(await ws.search('file', { mode: 'vector', topK: 10 })).sort(), ['a.md', 'c.md'])
    // Without BM25 the file is in no index: failed as it was.
    const vectorsOnly = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), embedder, autoIndexPaths: ['.'] })
    const alone = await vectorsOnly.init()
    assert.deepEqual([alone.indexed, alone.failed], [2, [{ path: 'b.md', error: 'cannot embed poison' }]])
  })

  test('an embedder that is down costs a round of calls, not one per file: a refused group is retried per file only while retries can answer', async (t) => {
    const files = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f${i}.md`, `file number ${i} marker${i}`]))
    const dir = tree(t, files)
    for (const [what, embedder, at_most] of [
      ['single-text, refusing', async () => { throw new Error('503 down') }, 60],
      ['batch of 8, refusing', Object.assign(async () => { throw new Error('503 down') }, { batch: true, maxBatchSize: 8 }), 8 + 8],
      ['batch of 8, never answering', Object.assign(() => new Promise(() => {}), { batch: true, maxBatchSize: 8 }), 8],
      ['one batch of 256, refusing', Object.assign(async () => { throw new Error('429') }, { batch: true }), 1 + 8],
    ]) {
      let calls = 0
      const counted = Object.assign((x) => (calls++, embedder(x)), embedder)
      const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, embedder: counted, embedTimeoutMs: 300, autoIndexPaths: ['.'] })
      const report = await ws.init()
      assert.equal(report.failed.length, 60, what)
      assert.ok(calls <= at_most, `${what}: ${calls} calls`)
      assert.deepEqual(ids(await ws.search("marker7", { mode: "bm25", topK: 1 })), ['f7.md'], what)
      await ws.destroy()
    }
  })

  test('one bad text fails its own file only, at any embedConcurrency, even when it is the first file retried', async (t) => {
    // Bad texts: one opening each of the first two batches, one more inside the second.
    const files = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${String(i).padStart(2, '0')}.md`, [0, 8, 9].includes(i) ? `poison ${i}` : `fine text ${i}`]))
    const dir = tree(t, files)
    const embedder = Object.assign(async (texts) => {
      if (texts.some((x) => x.includes('poison'))) throw new Error('refused')
      return texts.map((t) => hashEmbed(t))
    }, { batch: true, maxBatchSize: 8 })
    for (const embedConcurrency of [1, 8]) {
      const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, embedder, embedConcurrency, autoIndexPaths: ['.'] })
      const report = await ws.init()
      assert.deepEqual(report.failed.map((f) => f.path), ['f00.md', 'f08.md', 'f09.md'], `embedConcurrency ${embedConcurrency}`)
      await ws.destroy()
    }
  })

  test('an embedder down at init() (401, quota, network): keyword search works from the files; the next init() embeds them', async (t) => {
    for (const persist of [false, true]) {
      const dir = tree(t, { 'docs/a.md': 'router setup guide', 'docs/b.md': 'password reset help' })
      let down = true
      const embedded = []
      const embedder = async (text) => {
        if (down) throw new Error('401 Unauthorized: invalid API key')
        embedded.push(text)
        return hashEmbed(text)
      }
      const open = () =>
        new Workspace({
          filesystem: new LocalFilesystem({ basePath: dir }),
          bm25: true,
          embedder,
          autoIndexPaths: ['docs'],
          ...(persist ? { persist: { dir: path.join(dir, '.index') }, embedderId: 'hash' } : {}),
        })
      const ws = open()
      const report = await ws.init()
      const what = persist ? 'persist' : 'in memory'
      assert.equal(report.indexed, 2, what)
      assert.deepEqual(report.failed.map((f) => f.path).sort(), ['docs/a.md', 'docs/b.md'], what)
      assert.ok(report.failed.every((f) => f.error.startsWith('vectors not written: 401 Unauthorized: invalid API key (')), what)
      assert.deepEqual(ids(await ws.search('router', { mode: 'bm25' })), ['docs/a.md'], what)
      assert.equal(ws.stats().vectors, 0, what)
      // The ledger recorded nothing: the next init() embeds both files.
      down = false
      const again = await ws.init()
      assert.deepEqual([again.indexed, again.failed], [2, []], what)
      assert.deepEqual(embedded.sort(), ['password reset help', 'router setup guide'], what)
      assert.deepEqual(ids(await ws.search('router setup', { mode: 'vector', topK: 1 })), ['docs/a.md'], what)
      assert.equal(ws.stats().vectors, 2, what)
      await ws.destroy()
      if (persist) {
        // Saved with their vectors: the next process embeds nothing.
        const next = open()
        const before = embedded.length
        assert.deepEqual((await next.init()).failed, [])
        assert.equal(embedded.length, before, JSON.stringify(embedded))
        assert.equal(next.stats().vectors, 2)
        await next.destroy()
      }
    }
  })

  test('a file that shrank loses its extra chunks, and unindex() every chunk, whoever wrote them: the same rule for a shared LocalVector and a JavaScript store', async (t) => {
    const { LocalVector } = lib
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i} about routers and switches`)
    const chunks = (n) => Array.from({ length: n }, (_, i) => `big.md#chunk-${i}`)
    for (const kind of ['LocalVector', 'JavaScript store']) {
      const dir = tree(t, { 'big.md': lines.join('\n') })
      const local = new LocalVector()
      const js = { createIndex: (a) => local.createIndex(a), upsert: (a) => local.upsert(a), query: (a) => local.query(a), deleteVectors: (a) => local.deleteVectors(a) }
      // Workspaces of one process sharing an index, as a second process would share a database.
      const open = () =>
        new Workspace({
          filesystem: new LocalFilesystem({ basePath: dir }),
          bm25: true,
          autoIndexPaths: ['.'],
          chunking: { maxChars: 300, overlapLines: 0 },
          embedder: async (text) => hashEmbed(text),
          vectorStore: kind === 'LocalVector' ? local : js,
          searchIndexName: 'shared_chunks',
        })
      const stored = async () => (await local.query({ indexName: 'shared_chunks', queryVector: hashEmbed('routers'), topK: 100 })).map((h) => h.id).sort()
      await open().init()
      assert.deepEqual(await stored(), chunks(4), kind)
      fs.writeFileSync(path.join(dir, 'big.md'), lines.slice(0, 12).join('\n'))
      await open().init()
      assert.deepEqual(await stored(), chunks(2), kind)
      fs.writeFileSync(path.join(dir, 'big.md'), lines.join('\n'))
      await open().init()
      assert.deepEqual(await stored(), chunks(4), kind)
      await open().unindex('big.md')
      assert.deepEqual(await stored(), [], kind)
    }
  })

  test('a store with only upsert and query works', async () => {
    const { LocalVector } = lib
    const real = new LocalVector()
    await real.createIndex({ indexName: 'minimal_search', dimension: 64 })
    const store = { upsert: (a) => real.upsert(a), query: (a) => real.query(a) }
    const { embedder } = batchEmbedder(hashModel())
    const ws = new Workspace({ id: 'minimal', bm25: true, embedder, vectorStore: store })
    await ws.indexMany(DOCS)
    await ws.unindex('reset.md')
    await ws.clear()
    // Without delete methods the vectors stay in the store, as with Mastra.
    assert.equal((await ws.search('router', { mode: 'vector', topK: 10 })).length, DOCS.length)
  })
})

for (const kind of ['LocalVector', 'libsql']) {
  test(`${kind}: the workspace's vector index removed by another user of the store (deleteIndex) is made again at the next write, not a failure of every write until a restart`, async () => {
    const { store, close } = await makeStore(kind)
    const ws = new Workspace({ id: `gone_${kind}`, bm25: true, embedder: batchEmbedder(hashModel()).embedder, vectorStore: store })
    await ws.init()
    await ws.index('a', 'alpha routers and switches')
    await store.deleteIndex({ indexName: `gone_${kind}_search` })
    await ws.index('b', 'beta gardens and orchards')
    await ws.indexMany([{ path: 'c', content: 'gamma rivers and lakes' }])
    const found = await ws.search('beta gardens and orchards', { topK: 1, mode: 'vector' })
    assert.equal(found[0]?.id, 'b')
    assert.deepEqual((await ws.search('gamma rivers and lakes', { topK: 1, mode: 'vector' })).map((r) => r.id), ['c'])
    await ws.destroy()
    await close()
  })
}

test('a metadata key named id or text never takes the document\'s place: each hit is its own document, once, with its own text, and a filter on id means the document\'s id in every mode (a record\'s own id field made its hit come back as another document)', async (t) => {
  for (const kind of ['embedded', 'libsql']) {
    const ws = await hashWorkspace(t, kind)
    await ws.index('note-1', 'alpha beta gamma', { metadata: { id: 'note-2', author: 'x' } })
    await ws.index('note-2', 'alpha delta')
    await ws.index('h.ts', 'alpha words here', { metadata: { text: 'shadow text' } })
    for (const mode of ['vector', 'hybrid']) {
      const results = await ws.search('alpha beta gamma', { mode, topK: 5 })
      assert.deepEqual(results.map((r) => r.id).sort(), ['h.ts', 'note-1', 'note-2'], `${kind} ${mode}: each document once`)
      const byId = Object.fromEntries(results.map((r) => [r.id, r]))
      assert.equal(byId['note-1'].content, 'alpha beta gamma', `${kind} ${mode}`)
      assert.equal(byId['h.ts'].content, 'alpha words here', `${kind} ${mode}: its own text, not the metadata's`)
      assert.equal(results[0].id, 'note-1', `${kind} ${mode}: the exact match first`)
      assert.ok(byId['note-1'].scoreDetails.vector > 0.99, `${kind} ${mode}`)
    }
    for (const mode of ['vector', 'hybrid', 'bm25']) {
      const found = await ws.search('alpha', { mode, topK: 5, filter: { id: 'note-1' } })
      assert.deepEqual(found.map((r) => r.id), ['note-1'], `${kind} ${mode}: filter on id`)
    }
  }
})

test('vector mode breaks ties by id whatever the store returns first at the cut (LibSQL and DuckDB chose the last written)', async (t) => {
  for (const kind of ['embedded', 'libsql']) {
    const ws = await hashWorkspace(t, kind)
    for (const id of ['c', 'b', 'a', 'd']) await ws.index(id, 'the very same text')
    assert.deepEqual((await ws.search('the very same text', { mode: 'vector', topK: 1 })).map((r) => r.id), ['a'], kind)
    assert.deepEqual((await ws.search('the very same text', { mode: 'vector', topK: 3 })).map((r) => r.id), ['a', 'b', 'c'], kind)
  }
})

test('the embedded store scores long and short vectors exactly (components of 1e20 scored NaN and ranked an orthogonal document first), and refuses more than 65,536 dimensions', async () => {
  for (const scale of [1e20, 1e-30]) {
    const vectors = { same: [scale, 2 * scale, 0], other: [0, 0, scale] }
    const ws = new Workspace({ bm25: true, embedder: async (text) => vectors[text.split(' ')[0]] ?? vectors.same })
    await ws.index('same.md', 'same text')
    await ws.index('other.md', 'other text')
    const results = await ws.search('same', { mode: 'vector', topK: 2 })
    assert.deepEqual(results.map((r) => r.id), ['same.md', 'other.md'], String(scale))
    assert.ok(Math.abs(results[0].scoreDetails.vector - 1) < 1e-6, `${scale}: ${results[0].scoreDetails.vector}`)
    await ws.destroy()
  }
  const wide = new Workspace({ bm25: true, embedder: async () => new Array(70_000).fill(0.5) })
  await assert.rejects(wide.index('a', 'alpha'), /embedded vector store takes vectors of at most 65536 dimensions; the embedder answered 70000/)
  await wide.destroy()
})

test('vector mode answers each id once when a store answers a row twice', async (t) => {
  const inner = new lib.LocalVector({ id: 'inner' })
  const store = {
    createIndex: (a) => inner.createIndex(a), upsert: (a) => inner.upsert(a), deleteVectors: (a) => inner.deleteVectors(a),
    deleteIndex: (a) => inner.deleteIndex(a), listIndexes: () => inner.listIndexes(), describeIndex: (a) => inner.describeIndex(a),
    query: async (a) => (await inner.query(a)).flatMap((hit) => [hit, { ...hit }]),
  }
  const ws = new Workspace({ bm25: true, embedder: async (text) => hashEmbed(text), vectorStore: store })
  t.after(() => ws.destroy())
  for (const [id, text] of [['a', 'apples and pears'], ['b', 'apples and plums'], ['c', 'apples only']]) await ws.index(id, text)
  assert.deepEqual((await ws.search('apples and pears', { mode: 'vector', topK: 3 })).map((r) => r.id), ['a', 'b', 'c'])
})

test('vector and hybrid search before anything is embedded answer as the embedded store does: nothing, and the keyword half (LibSQL rejected: no such table)', async (t) => {
  for (const kind of ['embedded', 'libsql', 'duckdb']) {
    const ws = await hashWorkspace(t, kind)
    assert.deepEqual(await ws.search('alpha', { mode: 'vector' }), [], kind)
    assert.deepEqual(await ws.search('alpha', { mode: 'hybrid' }), [], kind)
  }
  // A store that fails for another reason still fails the search.
  const { store } = await makeStore('libsql')
  const failing = Object.assign(Object.create(Object.getPrototypeOf(store)), store, {
    query: async () => {
      throw new Error('connection reset')
    },
  })
  const ws = new Workspace({ bm25: true, embedder: async (text) => hashEmbed(text), vectorStore: failing })
  t.after(() => ws.destroy())
  await ws.index('a', 'alpha')
  await assert.rejects(ws.search('alpha', { mode: 'vector' }), /connection reset/)
})

/** `real` (a Mastra vector store) with some methods wrapped: `wrappers[name](call)` gives the method, `call` the real one. */
function wrapStore(real, wrappers) {
  return new Proxy(real, {
    get(target, key) {
      const value = Reflect.get(target, key)
      if (typeof value !== 'function') return value
      const call = value.bind(target)
      return wrappers[key] ? wrappers[key](call) : call
    },
  })
}

test("vectors a rebuild could not delete (the store's deletes failing) are never results, are reported, and are deleted by the next init(), after a restart too (they stayed in the store for good, answered by vector search)", async (t) => {
  const { LibSQLVector } = await import('@mastra/libsql')
  const base = tree(t, {
    'big.md': `${Array.from({ length: 10 }, (_, i) => `line ${i} zebra${i} giraffe words here`).join('\n')}\n`,
    'gone.md': 'walrus penguin seal\n',
    'other.md': 'other file text\n',
  })
  const dir = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR ?? '/tmp'), 'ws-undeleted-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const real = new LibSQLVector({ id: 'undeleted', url: `file:${dir}/v.db` })
  t.after(() => real.close?.())
  let failDeletes = false
  const failing = (call) => async (args) => {
    if (failDeletes) throw new Error('connection reset')
    return call(args)
  }
  const store = wrapStore(real, { deleteVectors: failing, deleteVector: failing })
  const stored = async () => (await store.query({ indexName: 'undeleted', queryVector: hashEmbed('x'), topK: 100 })).map((h) => h.id).sort()
  const open = () => new Workspace({
    searchIndexName: 'undeleted', filesystem: new LocalFilesystem({ basePath: base }), bm25: true, vectorStore: store,
    embedder: async (text) => hashEmbed(text), autoIndexPaths: ['.'], chunking: { maxChars: 80, overlapLines: 0 }, persist: { dir: `${dir}/persist` },
  })
  let ws = open()
  await ws.init()
  assert.ok((await stored()).includes('big.md#chunk-3'))
  fs.writeFileSync(path.join(base, 'big.md'), 'short now\n')
  fs.rmSync(path.join(base, 'gone.md'))
  failDeletes = true
  const report = await ws.init()
  assert.deepEqual(report.failed.map((f) => f.path).sort(), ['big.md', 'gone.md'])
  for (const f of report.failed) assert.match(f.error, /^old vectors not deleted from the vector store: connection reset/)
  assert.ok((await stored()).includes('gone.md') && (await stored()).includes('big.md#chunk-3'), 'the store still holds them')
  const found = async (query) => (await ws.search(query, { mode: 'vector', topK: 10 })).map((r) => r.id)
  for (const query of ['line 7 zebra7 giraffe words here', 'walrus penguin seal']) {
    const answer = await found(query)
    assert.ok(!answer.includes('gone.md') && !answer.some((id) => id.startsWith('big.md#')), `${query}: ${answer}`)
  }
  assert.equal(ws.stats().vectors, 2)
  // A restart (the snapshot keeps what is owed), the store answering again: deleted.
  await ws.destroy()
  failDeletes = false
  ws = open()
  t.after(() => ws.destroy())
  await ws.init()
  assert.deepEqual(await stored(), ['big.md', 'other.md'])
  assert.deepEqual((await found('walrus penguin seal')).sort(), ['big.md', 'other.md'])
})

test("a file the store refuses fails alone: the other files written with it in one upsert are written again file by file (99 beside it lost their vectors at every init()); a store that is down is not asked file by file", async (t) => {
  const { LibSQLVector } = await import('@mastra/libsql')
  const files = {}
  for (let i = 0; i < 150; i++) files[`f${String(i).padStart(3, '0')}.md`] = `alpha item${i}\n`
  const basePath = tree(t, files)
  const real = new LibSQLVector({ id: 'refusing', url: ':memory:' })
  t.after(() => real.close?.())
  let upserts = 0
  let down = false
  const store = wrapStore(real, {
    upsert: (call) => async (args) => {
      upserts++
      if (down || args.ids.includes('f050.md')) throw new Error(down ? 'connection refused' : 'unsupported Unicode escape sequence')
      return call(args)
    },
  })
  const embedder = Object.assign(async (texts) => texts.map((text) => hashEmbed(text)), { batch: true, maxBatchSize: 64 })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath }), bm25: true, vectorStore: store, embedder, autoIndexPaths: ['.'] })
  t.after(() => ws.destroy())
  const report = await ws.init()
  assert.deepEqual(report.failed.map((f) => f.path), ['f050.md'])
  assert.match(report.failed[0].error, /unsupported Unicode escape sequence/)
  assert.equal(ws.stats().vectors, 149)
  // Down: each unit is tried, and the probe of four files; not one call per file.
  down = true
  for (const f of Object.keys(files)) fs.appendFileSync(path.join(basePath, f), 'more\n')
  upserts = 0
  const again = await ws.init()
  assert.equal(again.failed.length, 150)
  assert.ok(upserts <= 2 * (2 + 4), `${upserts} upserts`)
})

test('an upsert that lands and then fails (a connection reset after the commit) leaves no new document in vector results, and clear() leaves nothing of it in the store (it stayed, known to no index)', async (t) => {
  const { LibSQLVector } = await import('@mastra/libsql')
  const real = new LibSQLVector({ id: 'landed', url: ':memory:' })
  t.after(() => real.close?.())
  let landThenThrow = false
  const store = wrapStore(real, {
    upsert: (call) => async (args) => {
      const answer = await call(args)
      if (landThenThrow) throw new Error('ECONNRESET after commit')
      return answer
    },
  })
  const ws = new Workspace({ bm25: true, vectorStore: store, searchIndexName: 'landed', embedder: async (text) => hashEmbed(text) })
  t.after(() => ws.destroy())
  await ws.index('kept.md', 'apples and pears')
  landThenThrow = true
  await assert.rejects(ws.indexMany([{ path: 'new.md', content: 'zebra stripes' }]), /ECONNRESET/)
  landThenThrow = false
  assert.deepEqual((await ws.search('zebra stripes', { mode: 'vector', topK: 5 })).map((r) => r.id), ['kept.md'])
  await ws.clear()
  assert.deepEqual(await store.query({ indexName: 'landed', queryVector: hashEmbed('zebra stripes'), topK: 10 }), [])
})

test('a file whose chunks span several upserts stays failed when an earlier one was refused, though a later one is written again file by file (it was reported fine, 100 chunks short); a chunk id given to a failing indexMany() keeps its file\'s vector', async (t) => {
  const { LibSQLVector } = await import('@mastra/libsql')
  const basePath = tree(t, {
    'a.md': `${Array.from({ length: 150 }, (_, i) => `line ${i} alpha`).join('\n')}\n`,
    'b.md': 'beta text\n',
  })
  const real = new LibSQLVector({ id: 'spanning', url: ':memory:' })
  t.after(() => real.close?.())
  let refuse = (ids) => ids.includes('a.md#chunk-5') || ids.includes('b.md')
  const store = wrapStore(real, {
    upsert: (call) => async (args) => {
      if (refuse(args.ids)) throw new Error('refused')
      return call(args)
    },
  })
  const embedder = Object.assign(async (texts) => texts.map((text) => hashEmbed(text)), { batch: true })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath }), bm25: true, vectorStore: store, embedder, autoIndexPaths: ['.'], chunking: { maxChars: 12, overlapLines: 0 } })
  t.after(() => ws.destroy())
  const report = await ws.init()
  assert.deepEqual(report.failed.map((f) => f.path).sort(), ['a.md', 'b.md'])
  // The store answers again: the next init() writes them whole.
  refuse = () => false
  const again = await ws.init()
  assert.deepEqual(again.failed, [])
  const chunks = ws.stats().documents - 1
  assert.equal(ws.stats().vectors, chunks + 1)
  // A chunk id given to indexMany() that the store refuses is no new document: its vector stays.
  refuse = (ids) => ids.includes('a.md#chunk-1')
  await assert.rejects(ws.indexMany([{ path: 'a.md#chunk-1', content: 'line 1 alpha' }]))
  refuse = () => false
  const hit = await ws.search('line 1 alpha', { mode: 'vector', topK: 3 })
  assert.ok(hit.some((r) => r.id === 'a.md#chunk-1'), hit.map((r) => r.id).join(' '))
})

test("after clear(), the embedded store takes vectors of another size (an embedder switched): its emptied index kept its dimension and refused them as 'the embedder changed'", async () => {
  let dim = 32
  const embed = (t) => Array.from({ length: dim }, (_, i) => ((t.length * 7 + i * 13) % 11) / 11 + 0.01)
  const ws = new Workspace({ bm25: true, embedder: async (t) => embed(t) })
  await ws.index('a.md', 'alpha beta')
  await ws.clear()
  assert.equal(ws.stats().vectors, 0)
  dim = 16
  await ws.index('b.md', 'alpha gamma')
  assert.deepEqual((await ws.search('alpha gamma', { mode: 'vector', topK: 5 })).map((r) => r.id), ['b.md'])
  // Without clear(), another size is still refused, naming the change.
  dim = 8
  await assert.rejects(ws.index('c.md', 'delta'), /has dimension 16, got a vector of dimension 8: the embedder's vectors are not the size/)
  await ws.destroy()
})

test('a vector store that answers ids and scores alone: vector and hybrid results carry the index\'s text (their content was empty)', async (t) => {
  const { LocalVector } = lib
  const { hashEmbed } = await import('./vector-helpers.mjs')
  const lv = new LocalVector()
  const bare = {
    createIndex: (p) => lv.createIndex(p),
    upsert: (p) => lv.upsert(p),
    deleteVectors: (p) => lv.deleteVectors(p),
    query: async (p) => (await lv.query(p)).map((h) => ({ id: h.id, score: h.score })),
  }
  const ws = new Workspace({ bm25: true, vectorStore: bare, embedder: Object.assign(async (texts) => texts.map((x) => hashEmbed(x, 16)), { batch: true }) })
  t.after(() => ws.destroy())
  await ws.indexMany([{ path: 'a', content: 'alpha beta', metadata: { kind: 'note' } }, { path: 'b', content: 'gamma delta' }])
  for (const mode of ['hybrid', 'vector']) {
    const [hit] = await ws.search('alpha beta', { mode, topK: 1 })
    assert.equal(hit.id, 'a', mode)
    assert.equal(hit.content, 'alpha beta', mode)
    assert.deepEqual(hit.lineRange, { start: 1, end: 1 }, mode)
    assert.deepEqual(hit.metadata, { kind: 'note' }, mode)
  }
})
