// Ranking quality on the evaluation sets of ../shared/data: indexes each
// corpus through the Workspace, runs every query, writes TREC run files to
// eval/out/ and prints nDCG@10 and Recall@100 per configuration and mode.
//
//   npm run eval [-- scifact cosqa] [--configs mastra,default] [--modes bm25,vector,hybrid,rrf]
//
// Vector and hybrid modes use the stored all-MiniLM-L6-v2 vectors as the
// embedder (a look-up by exact text).
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { CONFIGS } from './configs.mjs'
import { codeloc } from './codeloc.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const { Workspace } = createRequire(import.meta.url)('../index.js')
const DATA = path.resolve(here, '../../shared/data')

const args = process.argv.slice(2)
const flag = (name, def) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1].split(',') : def
}
const datasets = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'))
const configNames = flag('configs', ['mastra', 'before', 'default'])
const modes = flag('modes', ['bm25', 'vector', 'hybrid', 'rrf'])

export function loadDataset(dir) {
  const corpusFile = fs.existsSync(path.join(dir, 'corpus.jsonl')) ? path.join(dir, 'corpus.jsonl') : path.join(dir, 'corpus.jsonl.gz')
  let raw = fs.readFileSync(corpusFile)
  if (corpusFile.endsWith('.gz')) raw = zlib.gunzipSync(raw)
  const docs = raw.toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).map((d) => ({ id: d._id, text: `${d.title} ${d.text}`.trim() }))
  const queries = fs.readFileSync(path.join(dir, 'queries.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).map((q) => ({ id: q._id, text: q.text }))
  const qrels = new Map()
  for (const line of fs.readFileSync(path.join(dir, 'qrels.tsv'), 'utf8').split('\n').slice(1).filter(Boolean)) {
    const [q, d, s] = line.split('\t')
    if (Number(s) <= 0) continue
    if (!qrels.has(q)) qrels.set(q, new Map())
    qrels.get(q).set(d, Number(s))
  }
  return { docs, queries, qrels, vectors: loadVectors(dir, docs, queries) }
}

/** text -> stored MiniLM vector, when the dataset has them. */
function loadVectors(dir, docs, queries) {
  const edir = path.join(dir, 'embeddings/all-MiniLM-L6-v2')
  if (!fs.existsSync(edir)) return null
  const dim = JSON.parse(fs.readFileSync(path.join(edir, 'meta.json'), 'utf8')).dim
  const rows = (name) => {
    const ids = fs.readFileSync(path.join(edir, `${name}.ids`), 'utf8').split('\n').filter(Boolean)
    const b = fs.readFileSync(path.join(edir, `${name}.f32`))
    const all = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length))
    return new Map(ids.map((id, i) => [id, all.subarray(i * dim, (i + 1) * dim)]))
  }
  const byText = new Map()
  const docRows = rows('corpus')
  for (const d of docs) byText.set(d.text, docRows.get(d.id))
  const queryRows = rows('queries')
  for (const q of queries) byText.set(q.text, queryRows.get(q.id))
  return byText
}

/** nDCG@10 (gain = qrels score, log2 discount) and Recall@100 of one ranking. */
export function metrics(ranked, relevant) {
  let dcg = 0
  ranked.slice(0, 10).forEach((id, i) => {
    dcg += (relevant.get(id) ?? 0) / Math.log2(i + 2)
  })
  const ideal = [...relevant.values()].sort((a, b) => b - a).slice(0, 10).reduce((s, g, i) => s + g / Math.log2(i + 2), 0)
  const found = ranked.slice(0, 100).filter((id) => relevant.has(id)).length
  return { ndcg: ideal > 0 ? dcg / ideal : 0, recall: relevant.size ? found / relevant.size : 0 }
}

export async function evaluate(ds, config, mode, { tag, runFile, hybrid = {} } = {}) {
  const embedder = ds.vectors
    ? Object.assign(
        async (texts) =>
          texts.map((t) => {
            const v = ds.vectors.get(t)
            if (!v) throw new Error(`no stored vector for ${JSON.stringify(t.slice(0, 60))}`)
            return v
          }),
        { batch: true, maxBatchSize: 512 },
      )
    : undefined
  const needsVectors = mode !== 'bm25'
  if (needsVectors && !embedder) return null
  const ws = new Workspace({ ...config, ...(needsVectors ? { embedder } : {}) })
  await ws.indexMany(ds.docs.map((d) => ({ path: d.id, content: d.text })))
  const searchMode = mode === 'rrf' ? 'hybrid' : mode
  const lines = []
  let ndcg = 0
  let recall = 0
  for (const q of ds.queries) {
    const results = await ws.search(q.text, { topK: 100, mode: searchMode, ...(mode === 'rrf' ? { fusion: 'rrf' } : {}), ...hybrid })
    const m = metrics(results.map((r) => r.id), ds.qrels.get(q.id) ?? new Map())
    ndcg += m.ndcg
    recall += m.recall
    if (runFile) results.forEach((r, i) => lines.push(`${q.id} Q0 ${r.id} ${i + 1} ${r.score.toFixed(6)} ${tag}`))
  }
  if (runFile) fs.writeFileSync(runFile, `${lines.join('\n')}\n`)
  await ws.destroy()
  return { ndcg: ndcg / ds.queries.length, recall: recall / ds.queries.length }
}

async function main() {
  const prose = (d) => ['corpus.jsonl', 'corpus.jsonl.gz'].some((f) => fs.existsSync(path.join(DATA, d, f)))
  const names = datasets.length ? datasets.filter((d) => d !== 'codeloc-dev') : fs.readdirSync(DATA).filter((d) => fs.existsSync(path.join(DATA, d, 'qrels.tsv')) && prose(d))
  const out = path.join(here, 'out')
  fs.mkdirSync(out, { recursive: true })
  const rows = []
  for (const name of names) {
    const ds = loadDataset(fs.existsSync(name) ? name : path.join(DATA, name))
    const label = path.basename(name)
    for (const configName of configNames) {
      const config = CONFIGS[configName]
      if (!config) throw new Error(`unknown config ${configName}; known: ${Object.keys(CONFIGS).join(', ')}`)
      for (const mode of modes) {
        if (mode !== 'bm25' && configName !== configNames[configNames.length - 1] && configNames.length > 1 && !args.includes('--all-modes')) continue
        const tag = `${configName}-${mode}`
        const r = await evaluate(ds, config, mode, { tag, runFile: path.join(out, `${label}.${tag}.trec`) })
        if (!r) continue
        rows.push({ dataset: label, config: configName, mode, ...r })
        console.error(`${label} ${tag}: nDCG@10 ${r.ndcg.toFixed(4)}  Recall@100 ${r.recall.toFixed(4)}`)
      }
    }
  }
  console.log('\n| dataset | config | mode | nDCG@10 | Recall@100 |\n|---|---|---|---:|---:|')
  for (const r of rows) console.log(`| ${r.dataset} | ${r.config} | ${r.mode} | ${r.ndcg.toFixed(3)} | ${r.recall.toFixed(3)} |`)
  // The code set: file-level results, scored by its own tools (eval/codeloc.mjs).
  let code = null
  if (!datasets.length || datasets.includes('codeloc-dev')) {
    code = await codeloc()
    if (code) {
      console.log('\n| codeloc-dev | nDCG@10 | Acc@5 | R@10 | MRR | fd | ky | fzf |\n|---|---:|---:|---:|---:|---:|---:|---:|')
      const f = (x) => (x === undefined ? '' : x.toFixed(3))
      for (const r of code) console.log(`| ${r.run} | ${f(r.ndcg10)} | ${f(r.acc5)} | ${f(r.r10)} | ${f(r.mrr)} | ${f(r.per.fd)} | ${f(r.per.ky)} | ${f(r.per.fzf)} |`)
    }
  }
  fs.writeFileSync(path.join(out, 'results.json'), JSON.stringify({ prose: rows, codeloc: code }, null, 2))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main()
