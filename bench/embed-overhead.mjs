// Time spent outside the embedder and the vector store when indexing
// 10,000 documents (SciFact abstracts, 384-dim vectors) with an embedder
// that returns at once: indexMany() with the embedded store, and with
// LibSQL (':memory:') where the store's own time is measured and taken out.
//
//   node bench/embed-overhead.mjs [--runs 5]
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { loadDataset } from '../eval/run.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const { Workspace } = createRequire(import.meta.url)('../index.js')
const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 5
const ds = loadDataset(path.resolve(here, '../../shared/data/scifact'))
const docs = []
for (let copy = 0; docs.length < 10000; copy++) for (const d of ds.docs) if (docs.length < 10000) docs.push({ path: `${copy}/${d.id}`, content: d.text })

const timed = (fn, clock) => async (...a) => {
  const t = performance.now()
  try {
    return await fn(...a)
  } finally {
    clock.ms += performance.now() - t
  }
}

async function once(storeKind, vectorType) {
  const clock = { ms: 0 }
  const storeClock = { ms: 0 }
  const asVector = vectorType === 'Float32Array' ? (v) => v : (v) => Array.from(v)
  const embedder = Object.assign(
    timed(async (texts) => texts.map((t) => asVector(ds.vectors.get(t))), clock),
    { batch: true, maxBatchSize: 256 },
  )
  let vectorStore
  if (storeKind === 'libsql') {
    const { LibSQLVector } = await import('@mastra/libsql')
    const real = new LibSQLVector({ id: 'bench', url: ':memory:' })
    vectorStore = {
      createIndex: timed((a) => real.createIndex(a), storeClock),
      upsert: timed((a) => real.upsert(a), storeClock),
      query: timed((a) => real.query(a), storeClock),
    }
  }
  const ws = new Workspace({ bm25: true, embedder, ...(vectorStore ? { vectorStore } : {}) })
  const t = performance.now()
  await ws.indexMany(docs)
  const total = performance.now() - t
  return { total, embedder: clock.ms, store: storeClock.ms, outside: total - clock.ms - storeClock.ms }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
console.log(`indexMany of ${docs.length} documents with 384-dim vectors, BM25 on, median of ${runs} runs`)
console.log('| store | embedder returns | total ms | in embedder ms | in store ms | outside both ms | per document µs |\n|---|---|---:|---:|---:|---:|---:|')
for (const [store, type] of [['embedded', 'Float32Array'], ['embedded', 'number[]'], ['libsql', 'Float32Array']]) {
  const rs = []
  for (let i = 0; i < runs; i++) rs.push(await once(store, type))
  const m = (k) => median(rs.map((r) => r[k]))
  console.log(`| ${store} | ${type} | ${m('total').toFixed(0)} | ${m('embedder').toFixed(0)} | ${m('store').toFixed(0)} | ${m('outside').toFixed(0)} | ${((m('outside') * 1000) / docs.length).toFixed(1)} |`)
}
