// Identifier queries on the code set's folders: a name defined in exactly
// one source file (found by the plain patterns below, not by the engine)
// and written in at least three other files, asked as written
// (`parseUserId`) and as words (`parse user id`). Reports how often the
// defining file comes first (group 'file', topK 10) and the MRR, for all
// such names and for those of two words or more.
//
//   npm run eval:identifiers [-- --per-folder 60]
// (CODELOC_SET / CODELOC_CACHE as for eval/codeloc.mjs.)
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const here = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const { Workspace, LocalFilesystem, fileKind } = require(process.env.WS_PACKAGE ?? '../index.js')
const SET = process.env.CODELOC_SET ?? path.resolve(here, '../../shared/data/codeloc-dev')
const CACHE = process.env.CODELOC_CACHE ?? '/tmp/codeloc-cache'
const args = process.argv.slice(2)
const PER_FOLDER = Number(args.includes('--per-folder') ? args[args.indexOf('--per-folder') + 1] : 60)

const CODE = /\.(rs|go|ts|tsx|js|jsx|mjs|py|java|kt|c|h|cc|cpp|hpp)$/
const DEFINES = [
  /\b(?:fn|func|def|function|class|struct|interface|trait|enum|type)\s+([A-Za-z_][A-Za-z0-9_]*)/g,
  /\bfunc\s*\([^)]*\)\s*([A-Za-z_][A-Za-z0-9_]*)/g,
  /#define\s+([A-Za-z_][A-Za-z0-9_]*)/g,
  /\b(?:const|let|var)\s+([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?:async\s*)?(?:\(|function)/g,
]
const words = (name) => name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2').split(/[_\s]+/).filter(Boolean)

function walk(dir, base = dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === '.git' || e.name === 'node_modules') continue
    const p = path.join(dir, e.name)
    if (e.isDirectory()) walk(p, base, out)
    else if (e.isFile() && CODE.test(e.name)) out.push(path.relative(base, p))
  }
  return out
}

/** Names defined in one source file and written in three others, sampled evenly. */
function namesOf(folder) {
  const files = walk(folder).filter((f) => fileKind(f) === 'source')
  const texts = new Map(files.map((f) => [f, fs.readFileSync(path.join(folder, f), 'utf8')]))
  const definedIn = new Map()
  for (const [f, t] of texts) {
    for (const re of DEFINES) for (const m of t.matchAll(re)) if (m[1].length >= 4) (definedIn.get(m[1]) ?? definedIn.set(m[1], new Set()).get(m[1])).add(f)
  }
  const picked = []
  for (const [name, where] of [...definedIn].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (where.size !== 1) continue
    const [home] = where
    const word = new RegExp(`\\b${name}\\b`)
    let users = 0
    for (const [f, t] of texts) if (f !== home && word.test(t) && ++users >= 3) break
    if (users >= 3) picked.push({ name, home })
  }
  const step = Math.max(1, picked.length / PER_FOLDER)
  return Array.from({ length: Math.min(PER_FOLDER, picked.length) }, (_, i) => picked[Math.floor(i * step)])
}

const manifest = JSON.parse(fs.readFileSync(path.join(SET, 'manifest.json'), 'utf8'))
const setName = manifest.name ?? path.basename(SET)
const folders = fs.readdirSync(path.join(CACHE, setName)).filter((d) => !d.endsWith('.ok') && !d.endsWith('.part'))
const tally = { all: { n: 0, first: 0, rr: 0, firstWords: 0, rrWords: 0 }, compound: { n: 0, first: 0, rr: 0, firstWords: 0, rrWords: 0 } }
for (const folder of folders) {
  const base = path.join(CACHE, setName, folder)
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['.'] })
  await ws.init()
  for (const { name, home } of namesOf(base)) {
    const rank = async (q) => {
      const ids = (await ws.search(q, { topK: 10, group: 'file' })).map((r) => r.id.replace(/^\.\//, ''))
      return ids.indexOf(home) + 1
    }
    const [asWritten, asWords] = [await rank(name), await rank(words(name).join(' ').toLowerCase())]
    for (const t of words(name).length >= 2 ? [tally.all, tally.compound] : [tally.all]) {
      t.n++
      t.first += asWritten === 1
      t.rr += asWritten ? 1 / asWritten : 0
      t.firstWords += asWords === 1
      t.rrWords += asWords ? 1 / asWords : 0
    }
  }
  await ws.destroy()
}
const pct = (x, n) => `${((100 * x) / n).toFixed(0)}%`
console.log(`| ${setName}: names | queries | as written: first | MRR | as words: first | MRR |`)
console.log('|---|---:|---:|---:|---:|---:|')
for (const [k, t] of Object.entries(tally)) {
  console.log(`| ${k} | ${t.n} | ${pct(t.first, t.n)} | ${(t.rr / t.n).toFixed(3)} | ${pct(t.firstWords, t.n)} | ${(t.rrWords / t.n).toFixed(3)} |`)
}
