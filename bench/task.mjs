// One measurement in a fresh process (bench/run.mjs starts it):
//   node --expose-gc bench/task.mjs <task> '<corpus info json>'
// prints one JSON line of figures.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { documents, queries } from './corpus.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const [task, infoJson] = process.argv.slice(2)
const info = JSON.parse(infoJson)

const cpu = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
const settle = () => {
  for (let i = 0; i < 3; i++) global.gc()
}
/**
 * Memory grown since `base`. `copied`: bytes of document text the engine
 * keeps its own copy of (subtracted, to give what the index costs beyond
 * the text, per document); engines that keep references to the caller's
 * strings copy nothing.
 */
function memory(base, docs, copied) {
  settle()
  const m = process.memoryUsage()
  const rss = m.rss - base.rss
  return { rssMb: rss / 1e6, heapMb: (m.heapUsed - base.heapUsed) / 1e6, overheadPerDoc: (rss - copied) / docs }
}
function percentiles(samples) {
  const s = [...samples].sort((a, b) => a - b)
  return { p50Us: s[Math.floor(s.length * 0.5)] * 1000, p99Us: s[Math.floor(s.length * 0.99)] * 1000 }
}
async function latency(search, qs) {
  for (const q of qs.slice(0, 20)) await search(q) // warm up
  const samples = []
  for (let pass = 0; pass < 3; pass++) {
    for (const q of qs) {
      const t = performance.now()
      await search(q)
      samples.push(performance.now() - t)
    }
  }
  return percentiles(samples)
}

async function timed(fn) {
  const c = cpu()
  const t = performance.now()
  await fn()
  return { buildMs: performance.now() - t, cpuMs: cpu() - c }
}

const docs = documents(info)
const qs = queries(docs)
const contentBytes = docs.reduce((s, d) => s + Buffer.byteLength(d.content), 0)
const result = {}

if (task === 'ws-init' || task === 'ws-indexmany') {
  const { Workspace, LocalFilesystem } = require('..')
  if (task === 'ws-init') {
    settle()
    const base = process.memoryUsage()
    const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: info.dir }), bm25: true, autoIndexPaths: ['.'] })
    Object.assign(result, await timed(() => ws.init()))
    Object.assign(result, memory(base, docs.length, contentBytes))
    // The index's own account of its memory, beyond the content.
    result.statsOverheadPerDoc = (ws.stats().memoryBytes - contentBytes) / docs.length
    Object.assign(result, await latency((q) => ws.search(q, { topK: 10 }), qs))
  } else {
    const ws = new Workspace({ bm25: true })
    Object.assign(result, await timed(() => ws.indexMany(docs)))
    Object.assign(result, await latency((q) => ws.search(q, { topK: 10 }), qs))
    // One more document: its cost on the full index and on an empty one.
    const addOne = async (w) => {
      const samples = []
      for (let i = 0; i < 200; i++) {
        const d = docs[i % docs.length]
        const t = performance.now()
        await w.index(`extra/${i}`, d.content)
        samples.push(performance.now() - t)
      }
      return percentiles(samples).p50Us
    }
    result.addOneUs = await addOne(ws)
    result.addOneEmptyUs = await addOne(new Workspace({ bm25: true }))
    // Boundary: the same documents with empty content (no tokenizing),
    // median of 3 (one run is short and noisy).
    const empty = docs.map((d) => ({ path: d.path, content: '' }))
    const boundary = []
    for (let i = 0; i < 3; i++) {
      const b = await timed(() => new Workspace({ bm25: true }).indexMany(empty))
      boundary.push((b.buildMs * 1000) / docs.length)
    }
    result.boundaryUsPerDoc = boundary.sort((a, b) => a - b)[1]
    // Time outside an embedder that returns at once, per 10,000 documents.
    const n = Math.min(10000, docs.length)
    const vec = new Float32Array(384).fill(0.05)
    let inEmbedder = 0
    const embedder = Object.assign(
      async (texts) => {
        const t = performance.now()
        const out = texts.map(() => vec)
        inEmbedder += performance.now() - t
        return out
      },
      { batch: true, maxBatchSize: 256 },
    )
    const e = await timed(() => new Workspace({ bm25: true, embedder }).indexMany(docs.slice(0, n)))
    result.embedOutsideMs = ((e.buildMs - inEmbedder) * 10000) / n
  }
} else if (task === 'ws-persist') {
  // init() with persist over info.persistDir: cold when the directory is
  // empty (the save included), warm when it holds a snapshot.
  const { Workspace, LocalFilesystem } = require('..')
  const fs = require('node:fs')
  settle()
  const base = process.memoryUsage()
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: info.dir }), bm25: true, autoIndexPaths: ['.'], persist: { dir: info.persistDir } })
  let report
  Object.assign(result, await timed(async () => (report = await ws.init())))
  Object.assign(result, memory(base, docs.length, contentBytes))
  Object.assign(result, { reused: report.reused, reread: report.reread, removed: report.removed, warnings: report.warnings.length })
  result.snapshotBytesPerDoc = fs.statSync(path.join(info.persistDir, 'snapshot.wss')).size / docs.length
  result.statsBytesPerDoc = ws.stats().memoryBytes / docs.length
  // What saving alone costs (forced, nothing changed).
  const t = performance.now()
  await ws.save()
  result.saveMs = performance.now() - t
  Object.assign(result, await latency((q) => ws.search(q, { topK: 10 }), qs))
} else if (task === 'mastra-init' || task === 'mastra-index') {
  const { Workspace, LocalFilesystem } = await import('@mastra/core/workspace')
  settle()
  const base = process.memoryUsage()
  const filesystem = new LocalFilesystem({ basePath: info.dir })
  const ws = new Workspace(task === 'mastra-init' ? { filesystem, bm25: true, autoIndexPaths: ['.'] } : { filesystem, bm25: true })
  if (task === 'mastra-init') {
    Object.assign(result, await timed(() => ws.init()))
    Object.assign(result, memory(base, docs.length, contentBytes))
  } else {
    Object.assign(result, await timed(async () => {
      for (const d of docs) await ws.index(d.path, d.content)
    }))
    Object.assign(result, memory(base, docs.length, 0))
  }
  Object.assign(result, await latency((q) => ws.search(q, { topK: 10, mode: 'bm25' }), qs))
} else if (task === 'minisearch') {
  const { default: MiniSearch } = await import('minisearch')
  settle()
  const base = process.memoryUsage()
  const ms = new MiniSearch({ fields: ['content'], storeFields: ['content'], idField: 'path' })
  Object.assign(result, await timed(() => ms.addAll(docs)))
  Object.assign(result, memory(base, docs.length, 0))
  Object.assign(result, await latency((q) => ms.search(q).slice(0, 10), qs))
} else if (task === 'orama') {
  const { create, insertMultiple, search } = await import('@orama/orama')
  settle()
  const base = process.memoryUsage()
  const db = create({ schema: { path: 'string', content: 'string' } })
  Object.assign(result, await timed(() => insertMultiple(db, docs, 1000)))
  Object.assign(result, memory(base, docs.length, 0))
  Object.assign(result, await latency((q) => search(db, { term: q, properties: ['content'], limit: 10 }), qs))
} else {
  throw new Error(`unknown task ${task}`)
}
console.log(JSON.stringify(result))
