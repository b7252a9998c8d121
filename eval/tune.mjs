// The measurements behind the defaults (npm run eval:tune): tokenizer
// features, k1/b, and the hybrid matrix (fusion x vectorWeight x candidate
// depth), on every dataset of ../shared/data.
import path from 'node:path'
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { loadDataset, evaluate, metrics } from './run.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const { Workspace } = createRequire(import.meta.url)('../index.js')
const DATA = path.resolve(here, '../../shared/data')
const names = ['scifact', 'cosqa']
const sets = Object.fromEntries(names.map((n) => [n, loadDataset(path.join(DATA, n))]))
const f3 = (x) => x.toFixed(3)

const LUCENE = 'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(' ')
const TOKENIZERS = {
  'mastra preset': { preset: 'mastra' },
  'before (mastra + CJK bigrams)': { preset: 'mastra', cjkBigrams: true },
  'before + stem': { preset: 'mastra', cjkBigrams: true, stem: 'english' },
  'before + splitIdentifiers': { preset: 'mastra', cjkBigrams: true, splitIdentifiers: true },
  'before + foldDiacritics': { preset: 'mastra', cjkBigrams: true, foldDiacritics: true },
  'before + stem + splitIdentifiers (= default)': {},
  'default + foldDiacritics': { foldDiacritics: true },
  'default, no stopwords': { stopwords: [] },
  'default, Lucene stopwords': { stopwords: LUCENE },
}

console.log('## Tokenizer features (bm25 mode, k1 1.5, b 0.75)\n')
console.log('| tokenize | scifact nDCG@10 | scifact R@100 | cosqa nDCG@10 | cosqa R@100 |\n|---|---:|---:|---:|---:|')
for (const [label, tokenize] of Object.entries(TOKENIZERS)) {
  const r = {}
  for (const n of names) r[n] = await evaluate(sets[n], { bm25: { tokenize } }, 'bm25')
  console.log(`| ${label} | ${f3(r.scifact.ndcg)} | ${f3(r.scifact.recall)} | ${f3(r.cosqa.ndcg)} | ${f3(r.cosqa.recall)} |`)
}

const chosen = {}
console.log('\n## k1 / b (tokenize: stem + splitIdentifiers), nDCG@10 scifact / cosqa\n')
const bs = [0.5, 0.75, 0.9]
console.log(`| k1 \\ b | ${bs.join(' | ')} |\n|---|${bs.map(() => '---:').join('|')}|`)
for (const k1 of [0.9, 1.2, 1.5, 2.0]) {
  const cells = []
  for (const b of bs) {
    const s = await evaluate(sets.scifact, { bm25: { k1, b, tokenize: chosen } }, 'bm25')
    const c = await evaluate(sets.cosqa, { bm25: { k1, b, tokenize: chosen } }, 'bm25')
    cells.push(`${f3(s.ndcg)} / ${f3(c.ndcg)}`)
  }
  console.log(`| ${k1} | ${cells.join(' | ')} |`)
}

// Hybrid: the two halves come from the Workspace; the merge is SPEC 6's,
// run here for every weight and depth (the same maths as crates/core/src/hybrid.rs).
function merge(bm25, vector, w, fusion, k) {
  const byScore = (a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)
  const best = bm25.length ? Math.max(...bm25.map((h) => h.raw)) : 1
  const rank = (list) => new Map([...list].sort(byScore).map((h, i) => [h.id, i + 1]))
  const rb = rank(bm25.map((h) => ({ id: h.id, score: h.raw })))
  const rv = rank(vector)
  const ids = new Set([...bm25.map((h) => h.id), ...vector.map((h) => h.id)])
  const bmap = new Map(bm25.map((h) => [h.id, h.raw / best]))
  const vmap = new Map(vector.map((h) => [h.id, Math.min(1, Math.max(0, h.score))]))
  const out = [...ids].map((id) => {
    const score =
      fusion === 'rrf'
        ? 61 * ((rv.has(id) ? w / (60 + rv.get(id)) : 0) + (rb.has(id) ? (1 - w) / (60 + rb.get(id)) : 0))
        : w * (vmap.get(id) ?? 0) + (1 - w) * (bmap.get(id) ?? 0)
    return { id, score }
  })
  return out.sort(byScore).slice(0, k).map((h) => h.id)
}

for (const n of names) {
  const ds = sets[n]
  const embedder = Object.assign(async (texts) => texts.map((t) => ds.vectors.get(t)), { batch: true, maxBatchSize: 512 })
  const ws = new Workspace({ bm25: { tokenize: chosen }, embedder })
  await ws.indexMany(ds.docs.map((d) => ({ path: d.id, content: d.text })))
  const halves = []
  for (const q of ds.queries) {
    const bm25 = (await ws.search(q.text, { mode: 'bm25', topK: 200 })).map((r) => ({ id: r.id, raw: r.scoreDetails.bm25 }))
    const vector = (await ws.search(q.text, { mode: 'vector', topK: 200 })).map((r) => ({ id: r.id, score: r.scoreDetails.vector }))
    halves.push({ q, bm25, vector })
  }
  const at = (fn) => halves.reduce((s, h) => s + metrics(fn(h), ds.qrels.get(h.q.id) ?? new Map()).ndcg, 0) / halves.length
  const base = { bm25: at((h) => h.bm25.map((x) => x.id)), vector: at((h) => h.vector.map((x) => x.id)) }
  console.log(`\n## Hybrid on ${n} (nDCG@10, topK 10; bm25 alone ${f3(base.bm25)}, vector alone ${f3(base.vector)})\n`)
  const depths = [10, 20, 50, 100, 200]
  console.log(`| fusion | vectorWeight | ${depths.map((d) => `depth ${d}`).join(' | ')} |\n|---|---:|${depths.map(() => '---:').join('|')}|`)
  for (const fusion of ['weighted', 'rrf']) {
    for (const w of [0.3, 0.4, 0.5, 0.6, 0.7]) {
      const cells = depths.map((d) => f3(at((h) => merge(h.bm25.slice(0, d), h.vector.slice(0, d), w, fusion, 10))))
      console.log(`| ${fusion} | ${w} | ${cells.join(' | ')} |`)
    }
  }
  await ws.destroy()
}
