// A background save and the writes that land while it runs: a write applies
// to the vector store before the BM25 index, so a snapshot taken between
// the two would hold a vector without its document (a ghost that even
// clear() cannot reach) or lose one. The save is paused with the index
// held (a test-only hook read from the environment) while writes land; the
// writer is killed once that save is on disk; a fresh process loads it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { tree } from './helpers.mjs'

const entry = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'index.js')

const child = (dir, store) => `
  const fs = require('fs')
  const { Workspace, LocalVector } = require(${JSON.stringify(entry)})
  const embedOne = (t) => { let h = 7; for (const c of t) h = (h * 31 + c.charCodeAt(0)) >>> 0; return Float32Array.from({ length: 4 }, (_, i) => ((h >>> (i * 5)) & 31) / 31 - 0.5 + i * 0.01) }
  let calls = 0
  const embedder = Object.assign(async (ts) => { calls += ts.length; return ts.map(embedOne) }, { batch: true })
  const lv = ${store === 'given'} ? new LocalVector() : undefined
  const ws = new Workspace({ id: 'race', bm25: true, embedder, embedderId: 'e', persist: { dir: ${JSON.stringify(dir)} }, searchIndexName: 'rix', ...(lv ? { vectorStore: lv } : {}) })
  ;(async () => {
    await ws.init()
    if (process.argv[1] === 'write') {
      await ws.indexMany([{ path: 'keep', content: 'alpha keep' }, { path: 'gone', content: 'alpha gone soon' }, { path: 'upd', content: 'alpha old text' }])
      await ws.save()
      const snap = ${JSON.stringify(path.join(dir, 'snapshot.wss'))}
      const before = fs.statSync(snap).mtimeMs
      await ws.index('trigger', 'alpha trigger') // saved in the background a second later
      await new Promise((r) => setTimeout(r, 1300)) // that save is paused now, the index held
      ws.index('new', 'alpha brand new'); ws.unindex('gone'); ws.index('upd', 'alpha new text')
      while (fs.statSync(snap).mtimeMs === before) await new Promise((r) => setTimeout(r, 5))
      process.kill(process.pid, 'SIGKILL')
    } else {
      const atInit = calls
      const bm25 = (await ws.search('alpha', { mode: 'bm25', topK: 100 })).map((r) => [r.id, r.content]).sort()
      const vectors = (await ws.search('alpha', { mode: 'vector', topK: 100 })).map((r) => [r.id, r.content]).sort()
      await ws.destroy()
      console.log(JSON.stringify({ bm25, vectors, calls: atInit }))
    }
  })()
`

for (const store of ['embedded', 'given']) {
  test(`a background save while writes land: the snapshot holds each document's vector with it, no more, no less (${store} store)`, (t) => {
    const dir = tree(t)
    const source = child(dir, store)
    const writer = spawnSync(process.execPath, ['-e', source, 'write'], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, WORKSPACE_SEARCH_TEST_PAUSE: 'save-holds-index:1500' } })
    assert.equal(writer.signal, 'SIGKILL', writer.stderr)
    const reader = spawnSync(process.execPath, ['-e', source, 'check'], { encoding: 'utf8', timeout: 60_000 })
    assert.equal(reader.status, 0, reader.stderr)
    const { bm25, vectors, calls } = JSON.parse(reader.stdout)
    assert.deepEqual(vectors, bm25)
    assert.equal(calls, 0, 'nothing embedded again')
  })
}
