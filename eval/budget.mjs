// What an agent finds within a token budget, on codeloc-dev (../shared/data/
// codeloc-dev: real commit messages as tasks, the files they changed as the
// answers): for each query,
//   - ours: the MCP server's workspace_search (`workspace-search mcp <folder>
//     --no-persist`, one server per snapshot, called through the SDK's own
//     client over stdio) with maxTokens 2000 (and repeat: true, so every
//     query counts as the session's first);
//   - Mastra: Mastra 1.71's own mastra_workspace_search on Mastra's own
//     Workspace (LocalFilesystem over the folder, bm25: true, autoIndexPaths
//     ['.']), its text cut at 2000 tokens as Mastra's applyTokenLimit cuts
//     tool output (the first ~2000 tokens and a marker);
//   - top 10: our search(q, { topK: 10, group: 'file' }).
// Records whether a relevant file's path heads a result in the text (a
// line starting with the path), and how many tokens (tokenx) come before the
// first one (the whole budget when none does).
//
//   node eval/budget.mjs [--data DIR] [--folders DIR] [--max-tokens N] [--tune]
//
// --data: the codeloc-dev folder (default ../shared/data/codeloc-dev beside
// the repository, or $CODELOC_DIR); --folders: the built snapshot folders
// (default /tmp/codeloc-cache/codeloc-dev; the data's README says how to
// build them). --tune runs the page builder in-process over a grid of its
// parameters instead (no MCP, no Mastra), to choose them.
// Not part of npm test: it needs the data set.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { estimateTokenCount, sliceByTokens } from 'tokenx'

const here = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const { Workspace, LocalFilesystem } = require('../index.js')
const budget = require('../lib/budget.js')
const CLI = path.resolve(here, '../bin/workspace-search.js')

const args = process.argv.slice(2)
const flag = (name, def) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : def
}
const DATA = path.resolve(flag('data', process.env.CODELOC_DIR ?? path.resolve(here, '../../shared/data/codeloc-dev')))
const FOLDERS = path.resolve(flag('folders', '/tmp/codeloc-cache/codeloc-dev'))
const MAX_TOKENS = Number(flag('max-tokens', 2000))

if (!fs.existsSync(path.join(DATA, 'queries.jsonl'))) {
  console.error(`No codeloc-dev data at ${DATA}: give --data DIR (or CODELOC_DIR).`)
  process.exit(2)
}
const queries = fs.readFileSync(path.join(DATA, 'queries.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
const qrels = new Map()
for (const line of fs.readFileSync(path.join(DATA, 'qrels.tsv'), 'utf8').split('\n').slice(1).filter(Boolean)) {
  const [q, doc, score] = line.split('\t')
  if (Number(score) <= 0) continue
  if (!qrels.has(q)) qrels.set(q, new Set())
  qrels.get(q).add(doc.slice(doc.indexOf('/') + 1))
}
const bySnapshot = new Map()
for (const q of queries) {
  if (!bySnapshot.has(q.snapshot)) bySnapshot.set(q.snapshot, [])
  bySnapshot.get(q.snapshot).push(q)
}
for (const snap of bySnapshot.keys()) {
  if (!fs.existsSync(path.join(FOLDERS, snap))) {
    console.error(`No snapshot folder ${path.join(FOLDERS, snap)}: build them as ${path.join(DATA, 'README.md')} says (build_codeloc.py folders).`)
    process.exit(2)
  }
}

/**
 * Where the first relevant file heads a result in `text`: a line that
 * starts with its path followed by ':', '#' (a chunk id), whitespace or
 * the end. Tokens before that line; the whole budget when there is none.
 */
function firstRelevant(text, relevant) {
  let at = 0
  for (const line of text.split('\n')) {
    for (const p of relevant) {
      if (line.startsWith(p) && (line.length === p.length || /[:#\s]/.test(line[p.length]))) return { found: true, tokens: estimateTokenCount(text.slice(0, at)) }
    }
    at += line.length + 1
  }
  return { found: false, tokens: MAX_TOKENS }
}

/** Mastra's applyTokenLimit(output, limit, 'end') (dist/workspace-*.js), as its read_file and grep tools cut output. */
function mastraCut(output, limit) {
  const total = estimateTokenCount(output)
  if (total <= limit) return output
  const kept = sliceByTokens(output, 0, limit).replace(/[\uD800-\uDFFF]/gu, '\uFFFD')
  return `${kept}\n[output truncated: showing first ~${limit} of ~${total} tokens]`
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN
}
const share = (rows, k) => rows.filter((r) => r[k].found).length / rows.length
const pct = (x) => `${(100 * x).toFixed(1)}%`

async function ourWorkspace(folder) {
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: folder }), bm25: true, autoIndexPaths: ['.'] })
  await ws.init()
  return ws
}

async function tune() {
  // --grid '{"share":[4,8],"hits":[2,4],"context":[0,1],"lineTokens":[40]}' narrows it.
  const axes = { share: [4, 6, 8, 12], hits: [2, 3, 4, 6], context: [0, 1, 2], lineTokens: [30, 40, 60], ...JSON.parse(flag('grid', '{}')) }
  const grid = []
  for (const share of axes.share) for (const hits of axes.hits) for (const context of axes.context) for (const lineTokens of axes.lineTokens) grid.push({ share, hits, context, lineTokens })
  const rows = grid.map((params) => ({ params, found: 0, tokens: [], files: [], n: 0 }))
  for (const [snap, qs] of bySnapshot) {
    const ws = await ourWorkspace(path.join(FOLDERS, snap))
    for (const q of qs) {
      const results = await ws.search(q.text, { topK: budget.MAX_FILES + 1, group: 'file' })
      for (const row of rows) {
        const page = await budget.budgetedPage({ query: q.text, maxTokens: MAX_TOKENS, key: 'tune', search: async () => results, highlight: (a, b) => ws.highlight(a, b), params: row.params })
        const hit = firstRelevant(page.text, qrels.get(q._id))
        row.n++
        if (hit.found) row.found++
        row.tokens.push(hit.tokens)
        row.files.push(page.files.length)
      }
    }
    await ws.destroy()
  }
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length
  rows.sort((a, b) => b.found - a.found || mean(a.tokens) - mean(b.tokens))
  console.log(`share hits context lineTokens | found  median-tokens  mean-tokens  mean-files (defaults: ${JSON.stringify(budget.PARAMS)})`)
  for (const r of rows) console.log(`${String(r.params.share).padStart(5)} ${String(r.params.hits).padStart(4)} ${String(r.params.context).padStart(7)} ${String(r.params.lineTokens).padStart(10)} | ${pct(r.found / r.n).padStart(6)} ${String(median(r.tokens)).padStart(8)} ${mean(r.tokens).toFixed(0).padStart(8)} ${(r.files.reduce((a, b) => a + b, 0) / r.n).toFixed(1).padStart(8)}`)
}

async function measure() {
  const mastra = await import('@mastra/core/workspace')
  const rows = []
  for (const [snap, qs] of bySnapshot) {
    const folder = path.join(FOLDERS, snap)
    const started = Date.now()
    const ws = await ourWorkspace(folder)
    const theirs = new mastra.Workspace({ filesystem: new mastra.LocalFilesystem({ basePath: folder }), bm25: true, autoIndexPaths: ['.'] })
    await theirs.init()
    const theirTools = await mastra.createWorkspaceTools(theirs)
    const client = new Client({ name: 'eval-budget', version: '1.0.0' })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', folder, '--no-persist'], stderr: 'ignore' }))
    const session = new Client({ name: 'eval-budget-session', version: '1.0.0' })
    await session.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', folder, '--no-persist'], stderr: 'ignore' }))
    for (const q of qs) {
      const relevant = qrels.get(q._id)
      const top10 = (await ws.search(q.text, { topK: 10, group: 'file' })).map((r) => budget.fileOf(r))
      const answer = await client.callTool({ name: 'workspace_search', arguments: { query: q.text, maxTokens: MAX_TOKENS, repeat: true } })
      const ours = answer.content.map((c) => c.text).join('\n')
      // The same query on a second connection that keeps its memory (repeat off): a session's later calls.
      const later = (await session.callTool({ name: 'workspace_search', arguments: { query: q.text, maxTokens: MAX_TOKENS } })).content.map((c) => c.text).join('\n')
      const mastraText = mastraCut(String(await theirTools.mastra_workspace_search.execute({ query: q.text }, {})), MAX_TOKENS)
      rows.push({
        id: q._id,
        repo: q.repo,
        top10: { found: top10.some((f) => relevant.has(f)) },
        ours: { ...firstRelevant(ours, relevant), size: estimateTokenCount(ours), files: (ours.match(/^\S.*  \d\.\d{3}/gm) ?? []).length },
        mastra: { ...firstRelevant(mastraText, relevant), size: estimateTokenCount(mastraText) },
        session: { ...firstRelevant(later, relevant), size: estimateTokenCount(later) },
      })
      if (estimateTokenCount(ours) > MAX_TOKENS) throw new Error(`${q._id}: our answer has ${estimateTokenCount(ours)} tokens, over ${MAX_TOKENS}`)
    }
    await client.close()
    await session.close()
    await ws.destroy()
    await theirs.destroy()
    console.error(`${snap}: ${qs.length} queries, ${((Date.now() - started) / 1000).toFixed(1)} s`)
  }
  const report = (label, rs) => {
    const o = share(rs, 'ours')
    const m = share(rs, 'mastra')
    const t = share(rs, 'top10')
    const mo = median(rs.map((r) => r.ours.tokens))
    const mm = median(rs.map((r) => r.mastra.tokens))
    console.log(
      `| ${label} | ${rs.length} | ${pct(o)} | ${pct(m)} | ${(o / m).toFixed(2)}x | ${pct(t)} | ${(o / t).toFixed(3)} | ${mo} | ${mm} | ${(rs.reduce((s, r) => s + r.ours.files, 0) / rs.length).toFixed(1)} |`,
    )
  }
  console.log(`maxTokens ${MAX_TOKENS}; relevant file heading a result within the text, tokens (tokenx) before the first one (${MAX_TOKENS} when none)\n`)
  console.log('| queries | n | ours (MCP) | Mastra | ours / Mastra | top 10 files | ours / top 10 | median tokens to first, ours | Mastra | files per answer, ours |')
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  report('all', rows)
  for (const repo of [...new Set(rows.map((r) => r.repo))]) report(repo, rows.filter((r) => r.repo === repo))
  const size = (k) => median(rows.map((r) => r[k].size))
  const mean = (k) => (rows.reduce((s, r) => s + r[k].tokens, 0) / rows.length).toFixed(0)
  console.log(`\nmean tokens to the first relevant file: ours ${mean('ours')}, Mastra ${mean('mastra')}`)
  console.log(`median answer size: ours ${size('ours')} tokens, Mastra ${size('mastra')} tokens (after the cut)`)
  console.log(`in one session, repeat off (every query of a snapshot on one connection): ${pct(share(rows, 'session'))} found, median ${median(rows.map((r) => r.session.tokens))} / mean ${mean('session')} tokens to the first, median answer ${size('session')} tokens`)
}

await (args.includes('--tune') ? tune() : measure())
