// Benchmark corpora: folders of text files of about 6 KB made from real
// text, SciFact abstracts (../shared/data) and the JavaScript, TypeScript
// and Markdown files that installed packages ship (node_modules), written
// once to $TMPDIR/wss-bench/<files>/ and reused.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const TARGET = 6000

function* sourceTexts() {
  const corpus = path.resolve(here, '../../shared/data/scifact/corpus.jsonl.gz')
  const lines = zlib.gunzipSync(fs.readFileSync(corpus)).toString('utf8').split('\n').filter(Boolean)
  const abstracts = lines.map((l) => JSON.parse(l)).map((d) => `# ${d.title}\n\n${d.text.replace(/(.{1,100})(\s|$)/g, '$1\n')}`)
  const code = []
  const walk = (dir, depth) => {
    if (depth > 6 || code.length > 40000) return
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p, depth + 1)
      else if (/\.(m?js|ts|md)$/.test(e.name) && !e.name.endsWith('.min.js')) {
        const size = fs.statSync(p).size
        if (size > 200 && size < 400000) code.push(p)
      }
    }
  }
  walk(path.resolve(here, '../node_modules'), 0)
  code.sort()
  // Alternate prose and code so every corpus size has both.
  let a = 0
  let c = 0
  for (;;) {
    yield abstracts[a++ % abstracts.length]
    const text = fs.readFileSync(code[c++ % code.length], 'utf8')
    for (let i = 0; i < text.length; i += TARGET) yield text.slice(i, i + TARGET)
  }
}

/** A folder of `count` files of about 6 KB; returns { dir, files, bytes }. */
export function corpus(count) {
  const dir = path.join(os.tmpdir(), 'wss-bench', String(count))
  const doneFile = `${dir}.json`
  if (fs.existsSync(doneFile)) return JSON.parse(fs.readFileSync(doneFile, 'utf8'))
  fs.rmSync(dir, { recursive: true, force: true })
  const texts = sourceTexts()
  let bytes = 0
  for (let i = 0; i < count; i++) {
    let body = ''
    while (body.length < TARGET) body += `${texts.next().value}\n\n`
    const sub = path.join(dir, `d${String(Math.floor(i / 1000)).padStart(3, '0')}`)
    if (i % 1000 === 0) fs.mkdirSync(sub, { recursive: true })
    const text = body.slice(0, TARGET)
    fs.writeFileSync(path.join(sub, `f${String(i).padStart(6, '0')}.md`), text)
    bytes += Buffer.byteLength(text)
  }
  const info = { dir, files: count, bytes }
  fs.writeFileSync(doneFile, JSON.stringify(info))
  return info
}

/** The corpus as documents in memory (path, content). */
export function documents(info) {
  const docs = []
  for (const sub of fs.readdirSync(info.dir).sort()) {
    if (sub.startsWith('.')) continue
    for (const f of fs.readdirSync(path.join(info.dir, sub)).sort()) docs.push({ path: `${sub}/${f}`, content: fs.readFileSync(path.join(info.dir, sub, f), 'utf8') })
  }
  return docs
}

/** At least 200 queries of 1-4 words drawn from the corpus, fixed by a seed. */
export function queries(docs, n = 240) {
  let seed = 42
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed / 0x7fffffff
  }
  const out = []
  while (out.length < n) {
    const d = docs[Math.floor(rand() * docs.length)].content
    const words = d.match(/[A-Za-z]{4,}/g) ?? []
    if (words.length < 8) continue
    const len = 1 + Math.floor(rand() * 4)
    const start = Math.floor(rand() * (words.length - len))
    out.push(words.slice(start, start + len).join(' ').toLowerCase())
  }
  return out
}
