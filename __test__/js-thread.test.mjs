// A warm start leaves texts in the snapshot file until a result needs
// them: that read from disk happens off the JavaScript thread (the search
// promise is then not settled at once), and once read, a search is
// answered right away again (settled before the next macrotask).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { tree, Workspace, LocalFilesystem } from './helpers.mjs'

/** Whether `promise` settles within two microtask turns (a promise made settled does). */
async function settlesAtOnce(promise) {
  let settled = false
  promise.then(() => (settled = true), () => (settled = true))
  await null
  await null
  return settled
}

test('texts still in the snapshot are read off the JavaScript thread; read ones answer at once', async (t) => {
  const dir = tree(t, { 'docs/a.md': 'the heron nests by the river', 'docs/b.md': 'a kingfisher by the river' })
  // Older than the racy window (a file changed within it is read again).
  const past = new Date(Date.now() - 60_000)
  for (const f of ['docs/a.md', 'docs/b.md']) fs.utimesSync(path.join(dir, f), past, past)
  const persist = { dir: `${dir}-persist` }
  t.after(() => fs.rmSync(persist.dir, { recursive: true, force: true }))
  const open = () => new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], persist })
  const first = open()
  await first.init()
  const expected = await first.search('heron river', { topK: 5 })
  assert.equal(await settlesAtOnce(first.search('heron river')), true, 'in memory: answered at once')
  await first.destroy()
  assert.ok(fs.existsSync(path.join(persist.dir, 'snapshot.wss')) || fs.readdirSync(persist.dir).length > 0)

  const warm = open()
  t.after(() => warm.destroy())
  const report = await warm.init()
  assert.equal(report.reused, 2, `a warm start: ${JSON.stringify(report)}`)
  const pending = warm.search('heron river', { topK: 5 })
  assert.equal(await settlesAtOnce(pending), false, 'the texts are read from disk on another thread')
  assert.deepEqual(await pending, expected)
  assert.equal(await settlesAtOnce(warm.search('heron river', { topK: 5 })), true, 'read now: answered at once')
})

test('a long query is ranked off the JavaScript thread (a 32,000-word query held it 230 ms); a short one is answered at once', async (t) => {
  const ws = new Workspace({ bm25: true })
  t.after(() => ws.destroy())
  // Letters only: 3,000 distinct words, each in about 6 of the 300 documents.
  const word = (i) => { let n = (i * 7919) % 3000; let w = 'q'; do { w += String.fromCharCode(97 + (n % 26)); n = Math.floor(n / 26) } while (n); return w }
  await ws.indexMany(Array.from({ length: 300 }, (_, d) => ({ path: `d${d}`, content: Array.from({ length: 60 }, (_, i) => word(d * 60 + i)).join(' ') })))
  const short = `${word(5)} ${word(9)}`
  assert.equal(await settlesAtOnce(ws.search(short)), true, 'two words: at once')
  // More distinct words than a search at once may read; past 4 KB; many postings.
  const many = Array.from({ length: 65 }, (_, i) => word(i)).join(' ')
  const long = Array.from({ length: 2000 }, (_, i) => word(i)).join(' ')
  const cjk = '検索'.repeat(1500)
  for (const [name, query] of [['65 words', many], ['2,000 words', long], ['3,000 CJK characters', cjk]]) {
    const pending = ws.search(query, { topK: 20 })
    assert.equal(await settlesAtOnce(pending), false, `${name}: ranked on another thread`)
    const hits = await pending
    if (name !== '3,000 CJK characters') assert.equal(hits.length, 20, name)
  }
})
