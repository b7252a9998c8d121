// init() over a folder of >= 10,000 text files (SciFact abstracts written
// out twice): workspace-search's Workspace, Mastra's Workspace through
// workspace-search/mastra, and Mastra's own Workspace (bm25: true), one
// engine per child process, in the same run. Prints medians and ratios.
//
//   npm run bench:init [-- --runs 3]
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 3
const corpusFile = path.resolve(here, '../../shared/data/scifact/corpus.jsonl.gz')

function writeCorpus() {
  const dir = path.join(os.tmpdir(), 'wss-bench-scifact-10k')
  if (fs.existsSync(path.join(dir, 'done'))) return dir
  const lines = zlib.gunzipSync(fs.readFileSync(corpusFile)).toString('utf8').split('\n').filter(Boolean)
  for (const copy of ['a', 'b']) {
    fs.mkdirSync(path.join(dir, copy), { recursive: true })
    for (const line of lines) {
      const d = JSON.parse(line)
      fs.writeFileSync(path.join(dir, copy, `${d._id}.txt`), `${d.title}\n\n${d.text}\n`)
    }
  }
  fs.writeFileSync(path.join(dir, 'done'), '')
  return dir
}

/** The child program timing init() of the Workspace class a module exports. */
const timeInit = (module) => `
  import(${JSON.stringify(module)}).then(async ({ Workspace, LocalFilesystem }) => {
    const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: process.argv[1] }), bm25: true, autoIndexPaths: ['a', 'b'] })
    const t = performance.now()
    await ws.init()
    const ms = performance.now() - t
    const hits = await ws.search('vitamin D deficiency', { topK: 3 })
    console.log(JSON.stringify({ ms, top: hits.map((h) => h.id) }))
    process.exit(0)
  })`

const CHILD = {
  'workspace-search': timeInit(path.resolve(here, '../index.js')),
  'workspace-search/mastra': timeInit('workspace-search/mastra'),
  mastra: timeInit('@mastra/core/workspace'),
}

const dir = writeCorpus()
const files = fs.readdirSync(path.join(dir, 'a')).length * 2
const mb = (fs.readdirSync(path.join(dir, 'a')).reduce((s, f) => s + fs.statSync(path.join(dir, 'a', f)).size, 0) * 2) / 1e6
console.log(`corpus: ${files} files, ${mb.toFixed(1)} MB in ${dir}; ${runs} runs per engine, interleaved`)
const times = Object.fromEntries(Object.keys(CHILD).map((e) => [e, []]))
for (let i = 0; i < runs; i++) {
  for (const engine of Object.keys(CHILD)) {
    const out = execFileSync(process.execPath, ['-e', CHILD[engine], dir], { cwd: path.resolve(here, '..'), encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'ignore'] })
    const r = JSON.parse(out.trim().split('\n').at(-1))
    times[engine].push(r.ms)
    console.log(`  run ${i + 1} ${engine.padEnd(24)} ${r.ms.toFixed(0).padStart(7)} ms  top3 ${r.top.join(' ')}`)
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const theirs = median(times.mastra)
console.log(`\n| engine | init() median | MB/s | vs Mastra |\n|---|---:|---:|---:|`)
const names = { 'workspace-search': 'workspace-search Workspace', 'workspace-search/mastra': "Mastra's Workspace via workspace-search/mastra", mastra: "@mastra/core's own Workspace (bm25: true)" }
for (const engine of Object.keys(CHILD)) {
  const ms = median(times[engine])
  console.log(`| ${names[engine]} | ${ms.toFixed(0)} ms | ${(mb / (ms / 1000)).toFixed(1)} | ${(theirs / ms).toFixed(1)}x |`)
}
console.log(`\n${files} files`)
