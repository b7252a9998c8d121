// The reranker hook (rerank, rerankDepth, rerankTimeoutMs): a
// deterministic reranker moves results, in bm25, vector and hybrid mode;
// every failure (throw, no answer, wrong length, NaN, not an array) keeps
// the first-stage order and says why; a hanging one costs its timeout, not
// more.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Workspace, lib } from './helpers.mjs'
import { hashEmbed } from './vector-helpers.mjs'

const docs = [
  { path: 'a.md', content: 'reset the password from the settings page' },
  { path: 'b.md', content: 'password reset links expire after an hour' },
  { path: 'c.md', content: 'a password reset for the zebra account' },
  { path: 'd.md', content: `password ${'long text '.repeat(600)}` },
]
const open = async (options = {}) => {
  const ws = new Workspace({ bm25: true, ...options })
  await ws.indexMany(docs)
  return ws
}
const ids = (results) => results.map((r) => r.id)

test('a reranker moves the results it favours up, in every mode; candidates are bounded and described', async (t) => {
  const seen = []
  const rerank = (query, candidates) => {
    seen.push({ query, candidates })
    return candidates.map((c) => (c.text.includes('zebra') ? 10 : 0))
  }
  const plain = await open()
  const ws = await open({ rerank, rerankDepth: 3 })
  const embedder = async (text) => hashEmbed(text)
  const hybrid = new Workspace({ bm25: true, vectorStore: new lib.LocalVector({ id: 'rr' }), embedder, rerank })
  await hybrid.indexMany(docs)
  t.after(() => Promise.all([plain.destroy(), ws.destroy(), hybrid.destroy()]))
  const before = await plain.search('password reset', { topK: 4 })
  assert.notEqual(before[0].id, 'c.md')
  const after = await ws.search('password reset', { topK: 2 })
  assert.equal(after[0].id, 'c.md', 'the favoured result first')
  assert.equal(after.length, 2, 'cut to topK after reranking')
  assert.equal(after[0].score, 1)
  assert.equal(typeof after[0].scoreDetails.rerank, 'number')
  const { query, candidates } = seen.at(-1)
  assert.equal(query, 'password reset')
  assert.equal(candidates.length, 3, 'rerankDepth candidates, though topK was 2')
  for (const c of candidates) {
    assert.deepEqual(Object.keys(c).sort(), ['id', 'path', 'score', 'text'])
    assert.ok(c.text.length <= 2000)
  }
  for (const mode of ['vector', 'hybrid']) {
    const r = await hybrid.search('password reset zebra', { mode, topK: 4 })
    assert.equal(r[0].id, 'c.md', mode)
    assert.equal(typeof r[0].scoreDetails.rerank, 'number', mode)
  }
  const files = await ws.search('password reset', { topK: 2, group: 'file' })
  assert.equal(files[0].id, 'c.md', "group: 'file' too")
})

test('every way a reranker can fail keeps the first-stage order and says why; a hanging one costs its timeout', async (t) => {
  const plain = await open()
  t.after(() => plain.destroy())
  const expected = ids(await plain.search('password reset', { topK: 4 }))
  const cases = {
    throws: [() => { throw new Error('rate limited') }, /rate limited/],
    'throws a string': [() => { throw 'quota' }, /quota/],
    rejects: [async () => Promise.reject(new Error('down')), /down/],
    'never answers': [() => new Promise(() => {}), /did not answer within 1000 ms/],
    'wrong length': [(q, c) => c.slice(1).map(() => 1), /scores for/],
    NaN: [(q, c) => c.map(() => Number.NaN), /not a finite number/],
    'not an array': [() => 'yes', /did not answer an array of numbers \(got a string\)$/],
    'strings inside': [(q, c) => c.map(() => 'high'), /did not answer an array of numbers \(score 0 is a string\)$/],
  }
  for (const [label, [rerank, why]] of Object.entries(cases)) {
    const ws = await open({ rerank, rerankTimeoutMs: 1000 })
    const started = Date.now()
    const got = await ws.search('password reset', { topK: 4 })
    const took = Date.now() - started
    assert.deepEqual(ids(got), expected, `${label}: the first-stage order`)
    for (const r of got) assert.match(r.scoreDetails.rerankError ?? '', why, label)
    assert.ok(took < 1000 + 3000, `${label}: ${took} ms, bounded by the timeout`)
    await ws.destroy()
  }
})

test('rerank options are checked', () => {
  assert.throws(() => new Workspace({ bm25: true, rerank: 'yes' }), { name: 'TypeError', message: /rerank/ })
  assert.throws(() => new Workspace({ bm25: true, rerank: () => [], rerankDepth: 0 }), { name: 'RangeError', message: /rerankDepth/ })
  assert.throws(() => new Workspace({ bm25: true, rerank: () => [], rerankDepth: 5000 }), { name: 'RangeError', message: /rerankDepth/ })
  assert.throws(() => new Workspace({ bm25: true, rerank: () => [], rerankTimeoutMs: -1 }), { name: 'RangeError', message: /rerankTimeoutMs/ })
})

test('with a reranker, a smaller topK is a prefix of a larger one, scores and minScore alike (the blend\'s floor came from a hit past the candidates only when topK passed rerankDepth)', async (t) => {
  const many = Array.from({ length: 10 }, (_, i) => ({ path: `d${i}.ts`, content: `needle ${'needle '.repeat(10 - i)} filler ${'x'.repeat(i)} text ${i}` }))
  // Reverses the first stage's preference among the candidates.
  const ws = new Workspace({ bm25: true, rerank: (q, candidates) => candidates.map((c, i) => i), rerankDepth: 4, fileKinds: false })
  t.after(() => ws.destroy())
  await ws.indexMany(many)
  const scored = (results) => results.map((r) => `${r.id} ${r.score.toFixed(6)}`)
  for (const minScore of [undefined, 0.8]) {
    const full = scored(await ws.search('needle', { topK: 10, minScore }))
    for (const topK of [1, 3, 4, 5]) {
      assert.deepEqual(scored(await ws.search('needle', { topK, minScore })), full.slice(0, topK), `topK ${topK}, minScore ${minScore}`)
    }
  }
})

test('a reranker with no preference (one score for all) keeps the first-stage order and scores; scores far apart (±1e308) stay numbers in [0, 1] (lower candidates moved up; every score came out NaN, the least favoured first)', async (t) => {
  const many = Array.from({ length: 12 }, (_, i) => ({ path: `d${String(i).padStart(2, '0')}.md`, content: i === 0 ? 'alpha alpha beta' : `alpha beta filler ${i}` }))
  const ws = new Workspace({ bm25: true })
  t.after(() => ws.destroy())
  await ws.indexMany(many)
  const same = new Workspace({ bm25: true, rerank: (q, c) => c.map(() => 0.5) })
  t.after(() => same.destroy())
  await same.indexMany(many)
  const plain = await ws.search('alpha beta', { topK: 8 })
  const reranked = await same.search('alpha beta', { topK: 8 })
  assert.deepEqual(reranked.map((r) => [r.id, r.score]), plain.map((r) => [r.id, r.score]))
  assert.ok(reranked.every((r) => r.scoreDetails.rerank === 0.5))
  const far = new Workspace({ bm25: true, rerank: (q, c) => c.map((x, i) => (i === 0 ? -1e308 : 1e308)) })
  t.after(() => far.destroy())
  await far.indexMany(many)
  const results = await far.search('alpha beta', { topK: 12 })
  assert.ok(results.every((r) => Number.isFinite(r.score) && r.score >= 0 && r.score <= 1), JSON.stringify(results.map((r) => r.score)))
  assert.notEqual(results[0].id, plain[0].id, 'the candidate the reranker scored lowest is not first')
})
