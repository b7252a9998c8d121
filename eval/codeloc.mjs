// The code set of `npm run eval`: ../shared/data/codeloc-dev (commit
// message -> the files it changed, each repository as it was before), file
// level, scored by the set's own scorer (tools/score_codeloc.mjs). Builds
// the snapshot folders offline from the set's git bundles when they are
// missing (tools/build_codeloc.py). Prints, for the default workspace:
// group 'file' at topK 10 and 5, chunk results at topK 100, and the
// source-only figures (the file-level run at topK 100 restricted to
// hand-written source files: by fileKind, and by the set's own rules,
// `is_source` and `is_test` of tools/build_codeloc.py, as its
// `baselines_codeloc.py --source-only` restricts a run).
//
//   node eval/codeloc.mjs [--ws-json JSON] [--search-json JSON]
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const here = path.dirname(fileURLToPath(import.meta.url))
const pkg = path.resolve(here, '..')
const { fileKind } = createRequire(import.meta.url)('../index.js')
const SHARED = path.resolve(here, '../../shared')
// CODELOC_SET: another set of the same kind (a held-out one built with
// tools/build_codeloc.py), its folders under CODELOC_CACHE.
const SET = process.env.CODELOC_SET ?? path.join(SHARED, 'data/codeloc-dev')
const CACHE = process.env.CODELOC_CACHE ?? '/tmp/codeloc-cache'
const TOOLS = path.join(SHARED, 'data/codeloc-dev/tools')
const out = path.join(here, 'out')

const args = process.argv.slice(2)
const flag = (name) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? JSON.parse(args[i + 1]) : {}
}

function ensureFolders() {
  const manifest = JSON.parse(fs.readFileSync(path.join(SET, 'manifest.json'), 'utf8'))
  const name = manifest.name ?? path.basename(SET)
  const missing = JSON.stringify(manifest).match(/[A-Za-z0-9_.-]+@[0-9a-f]{12}/g)?.some((s) => !fs.existsSync(path.join(CACHE, name, s)))
  if (missing && process.env.CODELOC_SET) throw new Error(`the folders of ${SET} are not all in ${CACHE}/${name}`)
  if (missing) {
    execFileSync('python3', [path.join(TOOLS, 'build_codeloc.py'), 'folders', SET, '--bundles', path.join(SET, 'bundles'), '--cache', CACHE], { stdio: 'inherit' })
  }
}

/** Scores one configuration; returns the scorer's ALL row and the run file. */
function score(tag, topk, search, ws) {
  const run = path.join(out, `codeloc.${tag}.trec`)
  const text = execFileSync(process.execPath, [path.join(TOOLS, 'score_codeloc.mjs'), pkg, SET, '--cache', CACHE, '--topk', String(topk), '--out', run, '--tag', tag, '--search-json', JSON.stringify(search), '--ws-json', JSON.stringify(ws), '--json'], { encoding: 'utf8' })
  return { run, result: JSON.parse(text) }
}

const pathOf = (doc) => doc.slice(doc.indexOf('/') + 1)

/** The paths of `docs` that the set's own rules call non-test source files. */
function setSourcePaths(docs) {
  const paths = [...new Set(docs.map(pathOf))]
  const script = 'import json, sys, build_codeloc as bc\nprint(json.dumps([bc.is_source(p) and not bc.is_test(p) for p in json.load(sys.stdin)]))'
  const flags = JSON.parse(execFileSync('python3', ['-c', script], { cwd: TOOLS, input: JSON.stringify(paths), encoding: 'utf8' }))
  if (flags.length !== paths.length) throw new Error('build_codeloc.py answered for other paths')
  return new Set(paths.filter((_, i) => flags[i]))
}

/** The run restricted to the files `keep` takes (ranks renumbered), scored. */
function sourceOnly(run, keep, suffix) {
  const lines = fs.readFileSync(run, 'utf8').split('\n').filter(Boolean)
  const kept = []
  const rank = new Map()
  for (const l of lines) {
    const [q, , doc, , , tag] = l.split(' ')
    if (!keep(pathOf(doc))) continue
    const r = (rank.get(q) ?? 0) + 1
    rank.set(q, r)
    kept.push(`${q} Q0 ${doc} ${r} ${(1 / r).toFixed(8)} ${tag}-${suffix}`)
  }
  const file = run.replace(/\.trec$/, `.${suffix}.trec`)
  fs.writeFileSync(file, `${kept.join('\n')}\n`)
  const text = execFileSync(process.execPath, [path.join(TOOLS, 'score_codeloc.mjs'), '--eval', SET, file, '--json'], { encoding: 'utf8' })
  return Object.values(JSON.parse(text))[0]
}

export async function codeloc({ ws = flag('ws-json'), search = flag('search-json') } = {}) {
  if (!fs.existsSync(SET)) return null
  fs.mkdirSync(out, { recursive: true })
  ensureFolders()
  const rows = []
  const file10 = score('file-10', 10, { group: 'file', ...search }, ws)
  rows.push({ run: "group 'file', topK 10", ...pick(file10.result) })
  rows.push({ run: "group 'file', topK 5", ...pick(score('file-5', 5, { group: 'file', ...search }, ws).result) })
  rows.push({ run: 'chunks, topK 100 (folded by the scorer)', ...pick(score('chunk-100', 100, search, ws).result) })
  const file100 = score('file-100', 100, { group: 'file', ...search }, ws)
  const bySet = setSourcePaths(fs.readFileSync(file100.run, 'utf8').split('\n').filter(Boolean).map((l) => l.split(' ')[2]))
  const source = [
    ["source only by fileKind (group 'file', topK 100, other files left out)", (p) => fileKind(p) === 'source', 'source'],
    ["source only by the set's rules (build_codeloc.py is_source, not is_test)", (p) => bySet.has(p), 'set-source'],
  ]
  for (const [run, keep, suffix] of source) rows.push({ run, ...pick(sourceOnly(file100.run, keep, suffix)) })
  return rows
}

/** The figures of a scorer's JSON answer: over all queries, and nDCG@10 per repository. */
function pick(r) {
  const per = Object.fromEntries(Object.entries(r.repos).map(([repo, m]) => [repo, m['nDCG@10']]))
  return { ndcg10: r.all['nDCG@10'], acc5: r.all['Acc@5'], r10: r.all['R@10'], mrr: r.all.MRR, per }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await codeloc()
  if (!rows) {
    console.error(`no ${SET}: the code set is not here`)
    process.exit(0)
  }
  const repos = Object.keys(rows[0].per)
  console.log(`\n| ${path.basename(SET)} | nDCG@10 | Acc@5 | R@10 | MRR | ${repos.join(' | ')} |\n|---|---:|---:|---:|---:|${repos.map(() => '---:|').join('')}`)
  const f = (x) => (x === undefined ? '' : x.toFixed(3))
  for (const r of rows) console.log(`| ${r.run} | ${f(r.ndcg10)} | ${f(r.acc5)} | ${f(r.r10)} | ${f(r.mrr)} | ${repos.map((n) => f(r.per[n])).join(' | ')} |`)
}
