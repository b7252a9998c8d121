// The embedded vector store (LocalVector): query time and recall@10 of the
// int8 scan (codes, then oversample x k rescored exactly) against the exact
// f32 scan, in one process, on
//   - clustered random vectors (default 100,000 x 1,536: OpenAI's
//     text-embedding-3-small size), queries drawn the same way;
//   - SciFact's stored MiniLM vectors (5,183 x 384), its 300 queries (when
//     ../shared is there).
// Recall@10 = |int8 top-10 ∩ exact top-10| / 10, averaged over queries.
//
//   node bench/vectors.mjs [--n 100000] [--dim 1536] [--queries 200] [--oversample 1,2,4,8]
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

/** xorshift + Box-Muller: the same vectors every run. */
function gaussian(seed) {
  let x = BigInt(seed) | 1n
  const next = () => {
    x ^= (x << 13n) & 0xffffffffffffffffn
    x ^= x >> 7n
    x ^= (x << 17n) & 0xffffffffffffffffn
    return Number(x & 0xfffffffffffffn) / 2 ** 52
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

async function store(options, vectors, dim) {
  const lv = new LocalVector(options)
  await lv.createIndex({ indexName: 'v', dimension: dim })
  for (let i = 0; i < vectors.length; i += 5000) {
    const part = vectors.slice(i, i + 5000)
    await lv.upsert({ indexName: 'v', vectors: part, ids: part.map((_, j) => `v${String(i + j).padStart(7, '0')}`) })
  }
  return lv
}

async function timeQueries(lv, queries) {
  const ms = []
  const tops = []
  for (let round = 0; round < 2; round++) {
    for (const q of queries) {
      const t = performance.now()
      const r = await lv.query({ indexName: 'v', queryVector: q, topK: 10 })
      if (round === 1) {
        ms.push(performance.now() - t)
        tops.push(r.map((m) => m.id))
      }
    }
  }
  return { p50: pct(ms, 50), p99: pct(ms, 99), tops }
}

const recall = (got, exact) => got.reduce((s, top, i) => s + top.filter((id) => exact[i].includes(id)).length / exact[i].length, 0) / got.length

async function compare(label, vectors, queries, dim) {
  const rows = []
  const exactStore = await store({ quantization: 'none' }, vectors, dim)
  const exact = await timeQueries(exactStore, queries)
  rows.push({ scan: 'exact f32', p50: exact.p50, p99: exact.p99, recall: 1, bytes: vectors.length * dim * 4 })
  for (const oversample of OVERSAMPLES) {
    const lv = await store({ quantization: 'int8', oversample }, vectors, dim)
    const r = await timeQueries(lv, queries)
    rows.push({ scan: `int8, oversample ${oversample}`, p50: r.p50, p99: r.p99, recall: recall(r.tops, exact.tops), bytes: vectors.length * (dim * 4 + dim + 4) })
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
    await compare('SciFact MiniLM', ds.docs.map((d) => ds.vectors.get(d.text)), ds.queries.map((q) => ds.vectors.get(q.text)), 384)
  }
}
const all = clustered(N + QUERIES, DIM, 42)
await compare(`Clustered random (${CLUSTERS} centres)`, all.slice(0, N), all.slice(N), DIM)
