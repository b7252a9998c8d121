// A warm start of a workspace whose embedded store holds many vectors
// (default 1,000,000 x 384, clustered random): one process indexes them
// with `persist` and saves; a fresh child process then runs init() from the
// snapshot and one vector query. Reports init() time, the first query's,
// and the child's RSS split into file-backed pages (the mapped snapshot:
// vectors and codes are viewed there) and anonymous memory (what was
// copied or built).
//
//   node bench/vectors-warm.mjs [--n 1000000] [--dim 384]
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const here = fileURLToPath(import.meta.url)
const { Workspace, LocalVector } = createRequire(import.meta.url)('../index.js')
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? process.argv[i + 1] : dflt
}
const N = Number(arg('n', 1000000))
const DIM = Number(arg('dim', 384))

function vectorOf(i) {
  // Deterministic per document: a centre (i % 1000) plus noise, from i alone.
  let a = (i * 2654435761) >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5
  }
  const c = i % 1000
  const v = new Float32Array(DIM)
  for (let d = 0; d < DIM; d++) v[d] = Math.sin(c * 7.1 + d * 0.37) + 0.6 * next()
  return v
}

const embedder = Object.assign(async (texts) => texts.map((t) => vectorOf(Number(t.slice(4)))), { batch: true, maxBatchSize: 1000 })
const open = (dir) =>
  new Workspace({ bm25: true, embedder, embedderId: `warm-${DIM}`, vectorStore: new LocalVector({ index: 'flat' }), searchIndexName: 'warm', persist: { dir } })

function rssParts() {
  const status = fs.readFileSync('/proc/self/status', 'utf8')
  const kb = (name) => Number(status.match(new RegExp(`${name}:\\s+(\\d+)`))?.[1] ?? 0) * 1024
  return { anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') }
}

if (process.argv.includes('--child')) {
  const dir = process.argv[process.argv.indexOf('--child') + 1]
  const ws = open(dir)
  const t = performance.now()
  const report = await ws.init()
  const initMs = performance.now() - t
  const t2 = performance.now()
  const hits = await ws.search('text 12345', { mode: 'vector', topK: 10 })
  const queryMs = performance.now() - t2
  console.log(JSON.stringify({ initMs, queryMs, hits: hits.length, warnings: report.warnings ?? [], ...rssParts() }))
  process.exit(0)
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-warm-'))
try {
  const ws = open(dir)
  await ws.init()
  const t = performance.now()
  for (let i = 0; i < N; i += 10000) {
    const docs = []
    for (let j = i; j < Math.min(N, i + 10000); j++) docs.push({ path: `d/${j}`, content: `text${j}` })
    await ws.indexMany(docs)
  }
  const buildMs = performance.now() - t
  await ws.destroy()
  const bytes = fs.readdirSync(dir).reduce((s, f) => s + fs.statSync(path.join(dir, f)).size, 0)
  const child = JSON.parse(execFileSync(process.execPath, [here, '--child', dir, '--n', String(N), '--dim', String(DIM)], { encoding: 'utf8', maxBuffer: 1 << 20 }).trim().split('\n').pop())
  const mb = (b) => `${(b / 1e6).toFixed(0)} MB`
  console.log(`${N} x ${DIM} vectors (f32 ${mb(N * DIM * 4)}, codes ${mb(N * (DIM + 4))}), snapshot ${mb(bytes)}; indexed in ${(buildMs / 1000).toFixed(1)} s`)
  console.log(`warm start (fresh process): init() ${child.initMs.toFixed(0)} ms, first vector query ${child.queryMs.toFixed(1)} ms (${child.hits} hits); RSS file-backed ${mb(child.file)}, anonymous ${mb(child.anon)}`)
  if (child.warnings.length) console.log('warnings:', child.warnings)
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}
