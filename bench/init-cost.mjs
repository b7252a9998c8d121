// npm run bench:init-cost -- --before <a build> [--files 50000] [--rounds 8] [--threads N]
//
// init()'s CPU (process.cpuUsage(), user + system) over the mixed-language
// corpus (mixed-corpus.mjs), this build against another one (`--before`: a
// checkout's folder or its index.js, built), in fresh processes, the two
// alternating, the corpus's files read once before each process so that
// both find them in the page cache. Prints each build's medians and this
// build's ratio to the other. Issue 28's budget (the fields at most 15%
// slower per CPU-second than before them) is measured this way against
// fd51612; docs/ranking.md has the figures. Single runs mislead here:
// system time swings 2x between processes of one build (fresh pages).
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { mixedCorpus } from './mixed-corpus.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))

/** One init() of the package at `entry` over `dir`: its CPU, printed as JSON. */
async function child(entry, dir) {
  const { Workspace, LocalFilesystem } = createRequire(import.meta.url)(entry)
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'] })
  const start = process.cpuUsage()
  await ws.init()
  const used = process.cpuUsage(start)
  const stats = ws.stats()
  console.log(JSON.stringify({ user: used.user / 1000, system: used.system / 1000, documents: stats.documents, terms: stats.terms }))
  await ws.destroy()
}

/** Reads every file under `dir` (into the page cache). */
function warm(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) warm(p)
    else if (e.isFile()) fs.readFileSync(p)
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** `--before`'s index.js: the path itself, or the folder's. */
function entryOf(p) {
  const abs = path.resolve(p)
  return fs.statSync(abs).isDirectory() ? path.join(abs, 'index.js') : abs
}

async function main() {
  const args = process.argv.slice(2)
  if (args[0] === '--child') return child(args[1], args[2])
  const opt = (name, fallback) => {
    const i = args.indexOf(`--${name}`)
    if (i < 0) return fallback
    if (args[i + 1] === undefined || args[i + 1].startsWith('--')) throw new Error(`--${name} needs a value`)
    return args[i + 1]
  }
  const count = (name, fallback) => {
    const n = Number(opt(name, fallback))
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number of at least 1`)
    return n
  }
  const before = opt('before')
  if (!before) throw new Error('--before <a built checkout or its index.js> is required')
  const builds = [
    ['before', entryOf(before)],
    ['this', path.join(here, '..', 'index.js')],
  ]
  const { dir, files } = mixedCorpus(count('files', '50000'))
  const rounds = count('rounds', '8')
  const env = { ...process.env }
  if (opt('threads') !== undefined) env.RAYON_NUM_THREADS = String(count('threads'))
  const runs = { before: [], this: [] }
  for (let r = 0; r < rounds; r++) {
    // Each build first in every other round (what ran before sets the
    // page cache and the free memory the next one finds).
    for (const [name, entry] of r % 2 ? [...builds].reverse() : builds) {
      warm(dir)
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', entry, dir], { env, encoding: 'utf8' })
      runs[name].push(JSON.parse(out.trim().split('\n').pop()))
    }
  }
  const cpu = (r) => r.user + r.system
  console.log(`init() CPU over the mixed corpus, ${files} files, ${rounds} rounds, threads ${env.RAYON_NUM_THREADS ?? 'default'}`)
  for (const [name] of builds) {
    const rs = runs[name]
    console.log(
      `${name.padEnd(7)} cpu ${median(rs.map(cpu)).toFixed(0)} ms (user ${median(rs.map((r) => r.user)).toFixed(0)}, system ${median(rs.map((r) => r.system)).toFixed(0)}), ` +
        `${rs[0].documents} documents, ${rs[0].terms} terms; all: ${rs.map((r) => cpu(r).toFixed(0)).join(' ')}`,
    )
  }
  const ratio = (f) => ((median(runs.this.map(f)) / median(runs.before.map(f)) - 1) * 100).toFixed(1)
  console.log(`this build against before: cpu ${ratio(cpu)}%, user ${ratio((r) => r.user)}%`)
}

await main()
