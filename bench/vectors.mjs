// The embedded vector store (LocalVector): query time and recall@10 of the
// int8 scan (codes, then the candidates their error bound leaves, rescored exactly) against the exact
// f32 scan, in one process, on
//   - clustered random vectors (default 100,000 x 1,536: OpenAI's
//     text-embedding-3-small size), queries drawn the same way;
//   - SciFact's stored MiniLM vectors (5,183 x 384), its 300 queries (when
//     ../shared is there);
//   - with --graph-n (1,000,000 in `npm run bench:vectors`): clustered
//     384-dim vectors with the HNSW graph (`index: 'hnsw'`) against the
//     int8 scan, unfiltered and with filters matching 1% and 10%; the
//     graph's build time, and RSS.
// Recall@10 = |top-10 ∩ exact f32 top-10| / 10, averaged over queries.
//
//   node bench/vectors.mjs [--n 100000] [--dim 1536] [--queries 200] [--oversample 1,2,4,8] [--graph-n 0] [--ef 256]
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const here = path.dirname(fileURLToPath(import.meta.url))
const { LocalVector } = createRequire(import.meta.url)('../index.js')
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? process.argv[i + 1] : dflt
}
const N = Number(arg('n', 100000))
const DIM = Number(arg('dim', 1536))
const QUERIES = Number(arg('queries', 200))
const OVERSAMPLES = String(arg('oversample', '1,2,4,8')).split(',').map(Number)
const CLUSTERS = Number(arg('clusters', 1000))
const EF = Number(arg('ef', 256))

/** mulberry32 + Box-Muller: the same vectors every run. */
function gaussian(seed) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return () => Math.sqrt(-2 * Math.log(next() || 1e-12)) * Math.cos(2 * Math.PI * next())
}

/** Vectors around `clusters` centres: what embeddings of related texts look like. */
function clustered(n, dim, seed) {
  const g = gaussian(seed)
  const centres = Array.from({ length: CLUSTERS }, () => Float32Array.from({ length: dim }, g))
  const gc = gaussian(seed + 1)
  const pick = gaussian(seed + 2)
  return Array.from({ length: n }, () => {
    const c = centres[Math.floor(Math.abs(pick() * 1e6)) % CLUSTERS]
    const v = new Float32Array(dim)
    for (let i = 0; i < dim; i++) v[i] = c[i] + 0.6 * gc()
    return v
  })
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}

async function store(options, vectors, dim, metadataOf) {
  const lv = new LocalVector(options)
  await lv.createIndex({ indexName: 'v', dimension: dim })
  for (let i = 0; i < vectors.length; i += 5000) {
    const part = vectors.slice(i, i + 5000)
    const metadata = metadataOf ? part.map((_, j) => metadataOf(i + j)) : undefined
    await lv.upsert({ indexName: 'v', vectors: part, ids: part.map((_, j) => `v${String(i + j).padStart(7, '0')}`), metadata })
  }
  return lv
}

async function timeQueries(lv, queries, filter) {
  const ms = []
  const tops = []
  for (let round = 0; round < 2; round++) {
    for (const q of queries) {
      const t = performance.now()
      const r = await lv.query({ indexName: 'v', queryVector: q, topK: 10, filter })
      if (round === 1) {
        ms.push(performance.now() - t)
        tops.push(r.map((m) => m.id))
      }
    }
  }
  return { p50: pct(ms, 50), p99: pct(ms, 99), tops }
}

const recall = (got, exact) => got.reduce((s, top, i) => s + top.filter((id) => exact[i].includes(id)).length / exact[i].length, 0) / got.length

async function untilCaughtUp(lv) {
  const caughtUp = (g) => g?.state === 'failed' || (g?.state === 'ready' && g.pending === 0)
  while (!caughtUp((await lv.describeIndex({ indexName: 'v' })).graph)) await new Promise((r) => setTimeout(r, 100))
  return (await lv.describeIndex({ indexName: 'v' })).graph
}

async function compare(label, vectors, queries, dim, withGraph = false) {
  const rows = []
  const exactStore = await store({ quantization: 'none' }, vectors, dim)
  const exact = await timeQueries(exactStore, queries)
  rows.push({ scan: 'exact f32', p50: exact.p50, p99: exact.p99, recall: 1, bytes: vectors.length * dim * 4 })
  for (const oversample of OVERSAMPLES) {
    const lv = await store({ quantization: 'int8', oversample }, vectors, dim)
    const r = await timeQueries(lv, queries)
    rows.push({ scan: `int8, oversample ${oversample}`, p50: r.p50, p99: r.p99, recall: recall(r.tops, exact.tops), bytes: vectors.length * (dim * 4 + dim + 4) })
  }
  if (withGraph) {
    const lv = await store({ index: 'hnsw' }, vectors, dim)
    await untilCaughtUp(lv)
    const r = await timeQueries(lv, queries)
    rows.push({ scan: `HNSW graph (efSearch ${EF}), oversample 4`, p50: r.p50, p99: r.p99, recall: recall(r.tops, exact.tops), bytes: vectors.length * (dim * 4 + dim + 4) })
  }
  console.log(`\n${label}: ${vectors.length} x ${dim}, ${queries.length} queries, topK 10, cosine`)
  console.log('| scan | p50 ms | p99 ms | recall@10 | vector bytes |')
  console.log('| --- | ---: | ---: | ---: | ---: |')
  for (const r of rows) console.log(`| ${r.scan} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.recall.toFixed(4)} | ${(r.bytes / 1e6).toFixed(0)} MB |`)
}

const scifact = path.resolve(here, '../../shared/data/scifact')
if (fs.existsSync(scifact)) {
  const { loadDataset } = await import('../eval/run.mjs')
  const ds = loadDataset(scifact)
  if (ds.vectors) {
    await compare('SciFact MiniLM', ds.docs.map((d) => ds.vectors.get(d.text)), ds.queries.map((q) => ds.vectors.get(q.text)), 384, true)
  }
}
const mb = (b) => `${(b / 1e6).toFixed(0)} MB`

async function graphRun(n, dim) {
  const all = clustered(n + QUERIES, dim, 7)
  const vectors = all.slice(0, n)
  const queries = all.slice(n)
  const metadataOf = (i) => ({ pct: i % 100 })
  const filters = { none: undefined, '10%': { pct: { $lt: 10 } }, '1%': { pct: 7 } }
  const rows = []
  const exactStore = await store({ quantization: 'none', index: 'flat' }, vectors, dim, metadataOf)
  const truth = {}
  for (const [name, f] of Object.entries(filters)) truth[name] = await timeQueries(exactStore, queries, f)
  for (const [name] of Object.entries(filters)) rows.push({ scan: 'exact f32 scan', filter: name, ...truth[name], recall: 1 })
  const flat = await store({ index: 'flat' }, vectors, dim, metadataOf)
  for (const [name, f] of Object.entries(filters)) {
    const r = await timeQueries(flat, queries, f)
    rows.push({ scan: 'int8 scan', filter: name, ...r, recall: recall(r.tops, truth[name].tops) })
  }
  const rssBefore = process.memoryUsage().rss
  const t = performance.now()
  const graph = await store({ index: 'hnsw', efSearch: EF }, vectors, dim, metadataOf)
  const upsertMs = performance.now() - t
  await untilCaughtUp(graph)
  const buildMs = performance.now() - t
  const status = (await graph.describeIndex({ indexName: 'v' })).graph
  const rssGraph = process.memoryUsage().rss - rssBefore
  for (const [name, f] of Object.entries(filters)) {
    const r = await timeQueries(graph, queries, f)
    rows.push({ scan: `HNSW graph, efSearch ${EF}`, filter: name, ...r, recall: recall(r.tops, truth[name].tops) })
  }
  console.log(`\nClustered random (${CLUSTERS} centres): ${n} x ${dim}, ${queries.length} queries, topK 10, cosine; oversample 4`)
  console.log(`graph: ${status?.state}${status?.error ? ` (${status.error})` : ''}; upserts ${(upsertMs / 1000).toFixed(1)} s, ready after ${(buildMs / 1000).toFixed(1)} s; RSS of the store with its graph ${mb(rssGraph)} (f32 ${mb(n * dim * 4)}, codes ${mb(n * (dim + 4))})`)
  console.log('| search | filter | p50 ms | p99 ms | recall@10 |')
  console.log('| --- | --- | ---: | ---: | ---: |')
  for (const r of rows) console.log(`| ${r.scan} | ${r.filter} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.recall.toFixed(4)} |`)
}

const graphN = Number(arg('graph-n', 0))
if (graphN > 0) {
  await graphRun(graphN, 384)
} else {
  const all = clustered(N + QUERIES, DIM, 42)
  await compare(`Clustered random (${CLUSTERS} centres)`, all.slice(0, N), all.slice(N), DIM)
}
