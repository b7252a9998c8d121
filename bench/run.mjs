// npm run bench [-- --sizes 1000,10000,50000 --runs 3 --engines ws,persist,tantivy,mastra,minisearch,orama --corpus prose,mixed]
//
// Two corpora: prose (SciFact abstracts and node_modules' JS/TS/Markdown in
// ~6 KB files, corpus.mjs) and mixed-language code (Python, Rust, C
// headers, Rust's docs as text, JS/TS, mixed-corpus.mjs). tantivy (1 and 2
// indexing threads, top-10 ids) runs from bench/tantivy, built here.
//
// Builds corpora of ~6 KB files from real text (bench/corpus.mjs) and
// measures, one engine at a time in a fresh child process per run:
// build time (wall and CPU), MB/s, memory after build (RSS, heap, per
// document), query latency p50/p99 over 240 queries of 1-4 words, and for
// workspace-search also indexMany from memory, the boundary cost per
// document and the time outside an instant embedder. Medians of the runs;
// ratios against Mastra's Workspace measured in the same run. Writes
// bench/out/results.json and bench/out/results.md.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { corpus, documents, queries } from './corpus.mjs'
import { mixedCorpus } from './mixed-corpus.mjs'
import os from 'node:os'

const here = path.dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : def
}
const sizes = opt('sizes', '1000,10000,50000').split(',').map(Number)
const runs = Number(opt('runs', '3'))
const engines = opt('engines', 'ws,persist,tantivy,mastra,minisearch,orama').split(',')
const corpora = opt('corpus', 'prose,mixed').split(',')
const CORPORA = { prose: corpus, mixed: mixedCorpus }
// Engines too slow for a size are run once there (noted in the table).
const MASTRA_INDEX_MAX = Number(opt('mastra-index-max', '10000'))
const ORAMA_MAX = Number(opt('orama-max', '10000'))

// Each engine runs in its own process. The bench, as a host, turns
// transparent huge pages off for mimalloc (the package itself never does;
// see docs/benchmarks.md); MIMALLOC_ALLOW_THP=1 in the bench's own
// environment keeps them.
const childEnv = { ...process.env, MIMALLOC_ALLOW_THP: process.env.MIMALLOC_ALLOW_THP ?? '0' }

function child(task, info) {
  const out = execFileSync(process.execPath, ['--expose-gc', path.join(here, 'task.mjs'), task, JSON.stringify(info)], {
    env: childEnv,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 30 * 60 * 1000,
  })
  return JSON.parse(out.trim().split('\n').at(-1))
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
function medianOf(results) {
  const keys = Object.keys(results[0]).filter((k) => typeof results[0][k] === 'number')
  return Object.fromEntries(keys.map((k) => [k, median(results.map((r) => r[k]))]))
}

const TASKS = {
  ws: ['ws-init', 'ws-indexmany'],
  tantivy: ['tantivy-1', 'tantivy-2'],
  mastra: ['mastra-init', 'mastra-index'],
  minisearch: ['minisearch'],
  orama: ['orama'],
  persist: ['ws-persist-cold', 'ws-persist-warm', 'ws-persist-1pct'],
}

/**
 * persist: a cold init() into an empty directory (save included), warm
 * init()s of the unchanged folder, and one after 1% of the files changed
 * (restored afterwards; the warm runs of the next engine re-read them once).
 */
function persistTask(task, info, run) {
  const dir = path.join(os.tmpdir(), `wss-bench-persist-${path.basename(path.dirname(info.dir))}-${path.basename(info.dir)}`)
  if (task === 'ws-persist-cold') {
    fs.rmSync(dir, { recursive: true, force: true })
    fs.mkdirSync(dir, { recursive: true })
    return child('ws-persist', { ...info, persistDir: dir })
  }
  if (task === 'ws-persist-warm') return child('ws-persist', { ...info, persistDir: dir })
  // 1% of the files get a line more, then come back as they were.
  const files = documents(info).filter((_, i) => i % 100 === run % 100).map((d) => path.join(info.dir, d.path))
  const saved = files.map((f) => fs.readFileSync(f))
  files.forEach((f, i) => fs.writeFileSync(f, Buffer.concat([saved[i], Buffer.from(`\nchanged in run ${run}\n`)])))
  try {
    return child('ws-persist', { ...info, persistDir: dir })
  } finally {
    files.forEach((f, i) => fs.writeFileSync(f, saved[i]))
  }
}

/** The tantivy program, built once (release) outside the Cargo workspace. */
let tantivyBinary
function tantivy(task, info) {
  const dir = path.join(here, 'tantivy')
  if (!tantivyBinary) {
    execFileSync('cargo', ['build', '--release', '--quiet'], { cwd: dir, stdio: 'inherit' })
    tantivyBinary = path.join(dir, 'target/release/tantivy-bench')
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-tantivy-'))
  try {
    fs.writeFileSync(path.join(work, 'queries.txt'), queries(documents(info)).join('\n'))
    fs.mkdirSync(path.join(work, 'index'))
    const threads = task.split('-')[1]
    const out = execFileSync(tantivyBinary, [info.dir, path.join(work, 'queries.txt'), threads, path.join(work, 'index')], { encoding: 'utf8', maxBuffer: 1 << 24 })
    return JSON.parse(out.trim().split('\n').at(-1))
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

const all = {}
for (const name of corpora) {
  all[name] = {}
  for (const size of sizes) {
    const info = CORPORA[name](size)
    console.error(`\n# ${name}: ${size} files, ${(info.bytes / 1e6).toFixed(1)} MB in ${info.dir}`)
    const at = (all[name][size] = { files: size, mb: info.bytes / 1e6 })
    for (const engine of engines) {
      for (const task of TASKS[engine] ?? []) {
        let n = runs
        if (task === 'mastra-index' && size > MASTRA_INDEX_MAX) continue
        if (task === 'orama' && size > ORAMA_MAX) continue
        if (task.startsWith('mastra') && size >= 50000) n = 1
        if (task === 'ws-persist-cold') n = 1
        const results = []
        for (let i = 0; i < n; i++) {
          const r = task.startsWith('tantivy')
            ? tantivy(task, info)
            : task.startsWith('ws-persist')
              ? persistTask(task, info, i)
              : child(task, info)
          results.push(r)
          console.error(`  ${task} run ${i + 1}: ${JSON.stringify(r)}`)
        }
        at[task] = { ...medianOf(results), runs: n }
      }
    }
  }
}

const f = (x, d = 0) => (x === undefined ? '–' : x.toFixed(d))
const lines = []
for (const [name, bySize] of Object.entries(all)) for (const [size, r] of Object.entries(bySize)) {
  lines.push(`\n### ${name}: ${size} files (${r.mb.toFixed(0)} MB)\n`)
  lines.push('| engine | build ms | MB/s wall | MB/s per CPU-s | RSS MB | heap MB | bytes/doc beyond the text | query p50 µs | query p99 µs | runs |')
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  const label = { 'ws-init': 'workspace-search init()', 'ws-indexmany': 'workspace-search indexMany()', 'tantivy-1': 'tantivy, 1 indexing thread (top-10 ids)', 'tantivy-2': 'tantivy, 2 indexing threads (top-10 ids)', 'mastra-init': 'Mastra Workspace init()', 'mastra-index': 'Mastra Workspace index() per doc', minisearch: 'MiniSearch addAll', orama: 'Orama insertMultiple' }
  for (const [task, name] of Object.entries(label)) {
    const t = r[task]
    if (!t) continue
    lines.push(`| ${name} | ${f(t.buildMs)} | ${f(r.mb / (t.buildMs / 1000), 1)} | ${f(r.mb / (t.cpuMs / 1000), 1)} | ${f(t.rssMb)} | ${f(t.heapMb)} | ${f(t.overheadPerDoc)} | ${f(t.p50Us, 1)} | ${f(t.p99Us, 1)} | ${t.runs} |`)
  }
  const ws = r['ws-init']
  const m = r['mastra-init']
  const tv = r['tantivy-2']
  const tv1 = r['tantivy-1']
  if (ws && tv && tv1) {
    lines.push(`\nAgainst tantivy (same run): init() ${f(tv.buildMs / ws.buildMs, 2)}x tantivy-2's wall speed, ${f(tv1.cpuMs / ws.cpuMs, 2)}x tantivy-1's speed per CPU-second; query p50 ${f(ws.p50Us / tv.p50Us, 2)}x tantivy's, p99 ${f(ws.p99Us / tv.p99Us, 2)}x.`)
  }
  if (ws && m) {
    lines.push(`\nRatios against Mastra (same run): init() ${f(m.buildMs / ws.buildMs, 1)}x faster; query p50 ${f(m.p50Us / ws.p50Us)}x faster, p99 ${f(m.p99Us / ws.p99Us)}x faster.`)
  }
  const mi = r['mastra-index']
  const wm = r['ws-indexmany']
  if (wm) {
    lines.push(`workspace-search indexMany: ${f(r.mb / (wm.buildMs / 1000), 1)} MB/s; boundary cost ${f(wm.boundaryUsPerDoc, 2)} µs/doc (indexMany of the same documents with empty content); one more index() on the full index ${f(wm.addOneUs, 1)} µs (median of 200 ${'`'}index()${'`'} calls) vs ${f(wm.addOneEmptyUs, 1)} µs on an empty index; time outside an instant embedder ${f(wm.embedOutsideMs)} ms per 10,000 documents.`)
  }
  const [pc, pw, p1] = ['ws-persist-cold', 'ws-persist-warm', 'ws-persist-1pct'].map((k) => r[k])
  if (pc && pw) {
    lines.push(`\npersist (same run): cold init() with save ${f(pc.buildMs)} ms (save alone ${f(pc.saveMs)} ms), RSS ${f(pc.rssMb)} MB; warm init() ${f(pw.buildMs)} ms (${f(pc.buildMs / pw.buildMs, 1)}x faster than cold${ws ? `, ${f(ws.buildMs / pw.buildMs, 1)}x faster than init() without persist` : ''}), RSS ${f(pw.rssMb)} MB, ${f(pw.reused)} files reused, ${f(pw.reread)} read; ${p1 ? `1% of the files changed: ${f(p1.buildMs)} ms (${f(p1.reread)} read; saved a second later, not included); ` : ''}snapshot ${f(pw.snapshotBytesPerDoc)} bytes/doc on disk vs ${f(pw.statsBytesPerDoc)} bytes/doc in memory (the index's own account); query p50 ${f(pw.p50Us, 1)} µs warm vs ${f(pc.p50Us, 1)} µs cold.`)
  }
  if (mi && wm) lines.push(`Mastra index() per document: ${f(mi.buildMs)} ms for all (${f(r.mb / (mi.buildMs / 1000), 2)} MB/s).`)
}
const table = lines.join('\n')
console.log(table)
fs.mkdirSync(path.join(here, 'out'), { recursive: true })
fs.writeFileSync(path.join(here, 'out/results.json'), JSON.stringify(all, null, 2))
fs.writeFileSync(path.join(here, 'out/results.md'), `${table}\n`)
