// npm run bench:grep [-- --sizes 10000,50000 --runs 7]
// Grep on the mixed-language code corpus (mixed-corpus.mjs): this package's
// Workspace.grep (warm: after the first grep built its trigram index; the
// first grep's time is printed too), ripgrep (`rg`, when installed) over the
// same folder, and Mastra 1.71's own grep tool (its JavaScript walk, called
// as an agent calls it). Medians of --runs, same process, this machine.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { mixedCorpus } from './mixed-corpus.mjs'
import { Workspace } from '../index.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : def
}
const sizes = opt('sizes', '10000,50000').split(',').map(Number)
const runs = Number(opt('runs', '7'))
const MASTRA_MAX = Number(opt('mastra-max', '50000'))

/** The patterns: [label, JavaScript regex source]. */
const PATTERNS = [
  ['selective literal', 'PyErr_SetFromErrnoWithFilename'],
  ['selective literal, case-insensitive', 'pyerr_setfromerrnowithfilename', true],
  ['selective alternation', '(?:HashMapEntry|btreemap_iter)'],
  ['regex, common literals', 'fn\\s+parse_[a-z]+_header'],
  ['most files', 'return'],
  ['no literal', '\\w+\\(\\)'],
]

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function timed(f) {
  const t = performance.now()
  const out = await f()
  return [performance.now() - t, out]
}

const hasRg = spawnSync('rg', ['--version']).status === 0

function rg(dir, pattern, ci) {
  // -n --column as Mastra reports; -m not set; exit 1 (no match) is fine.
  const r = spawnSync('rg', [...(ci ? ['-i'] : []), '-n', '--column', '--no-heading', '-e', pattern, dir], { maxBuffer: 1 << 30 })
  return r.stdout.toString().split('\n').filter(Boolean).length
}

async function mastraTool(dir) {
  const mastra = await import('@mastra/core/workspace')
  const workspace = new mastra.Workspace({ filesystem: new mastra.LocalFilesystem({ basePath: dir }) })
  const tools = await mastra.createWorkspaceTools(workspace)
  const grep = tools.mastra_workspace_grep
  return { grep: (pattern, ci) => grep.execute({ pattern, caseSensitive: !ci }, { workspace }), destroy: () => workspace.destroy() }
}

const rows = []
for (const size of sizes) {
  const info = mixedCorpus(size)
  const ws = new Workspace({ filesystem: { basePath: info.dir } })
  const [first] = await timed(() => ws.grep(PATTERNS[0][1]))
  // The first grep scans; the trigram index is built after it, in the background.
  const cpu = process.cpuUsage()
  const [build] = await timed(async () => {
    while (ws.stats().grep?.building !== false) await new Promise((r) => setTimeout(r, 10))
  })
  const buildCpu = (process.cpuUsage(cpu).user + process.cpuUsage(cpu).system) / 1000
  const stats = ws.stats().grep
  // What building it with the BM25 index would add: init() of the same folder.
  const indexed = new Workspace({ filesystem: { basePath: info.dir }, bm25: true, autoIndexPaths: ['.'], gitHistory: false })
  const initCpu0 = process.cpuUsage()
  const [init] = await timed(() => indexed.init())
  const initCpu = (process.cpuUsage(initCpu0).user + process.cpuUsage(initCpu0).system) / 1000
  await indexed.destroy()
  const mastra = size <= MASTRA_MAX ? await mastraTool(info.dir) : undefined
  for (const [label, pattern, ci] of PATTERNS) {
    const ours = []
    let matches = 0
    for (let i = 0; i < runs; i++) {
      const [ms, out] = await timed(() => ws.grep(pattern, { caseSensitive: !ci }))
      ours.push(ms)
      matches = out.reduce((n, f) => n + f.matches.length, 0)
    }
    const read = ws.stats().grep.lastRead
    const rgTimes = []
    let rgLines
    for (let i = 0; hasRg && i < runs; i++) {
      const [ms, n] = await timed(() => rg(info.dir, pattern, ci))
      rgTimes.push(ms)
      rgLines = n
    }
    const mastraTimes = []
    for (let i = 0; mastra && i < Math.min(runs, 3); i++) mastraTimes.push((await timed(() => mastra.grep(pattern, ci)))[0])
    rows.push({ size, label: `${label}: \`${pattern}\``, read, matches, rgLines, ours: median(ours), rg: hasRg ? median(rgTimes) : undefined, mastra: mastraTimes.length ? median(mastraTimes) : undefined })
  }
  rows.push({ size, label: 'first grep (a scan: no index yet)', ours: first, rg: rows.find((r) => r.size === size && r.label.startsWith(`${PATTERNS[0][0]}:`))?.rg })
  rows.push({ size, label: `trigram index built after it, in the background: ${(stats.memoryBytes / 1e6).toFixed(1)} MB for ${(info.bytes / 1e6).toFixed(1)} MB of text (${(stats.memoryBytes / info.bytes).toFixed(2)}x); ${buildCpu.toFixed(0)} ms CPU, against ${initCpu.toFixed(0)} ms CPU for init() (bm25) of the same files (${init.toFixed(0)} ms wall): built with the index it would add ${((100 * buildCpu) / initCpu).toFixed(0)}%`, ours: build })
  await mastra?.destroy()
  await ws.destroy()
}

const f = (x, d = 1) => (x === undefined ? '–' : x.toFixed(d))
const lines = ['| files | pattern | files read | matches (ours / rg lines) | ours ms | rg ms | Mastra ms | rg / ours | Mastra / ours |', '|---:|---|---:|---:|---:|---:|---:|---:|---:|']
for (const r of rows) {
  const ratio = (x) => (x === undefined || r.ours === undefined ? '–' : `${(x / r.ours).toFixed(1)}x`)
  lines.push(`| ${r.size} | ${r.label} | ${r.read ?? ''} | ${r.matches ?? ''}${r.rgLines !== undefined ? ` / ${r.rgLines}` : ''} | ${f(r.ours)} | ${f(r.rg)} | ${f(r.mastra, 0)} | ${ratio(r.rg)} | ${ratio(r.mastra)} |`)
}
const table = lines.join('\n')
console.log(table)
fs.mkdirSync(path.join(here, 'out'), { recursive: true })
fs.writeFileSync(path.join(here, 'out', 'grep.md'), `${table}\n`)
void execFileSync
