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
import fs from 'node:fs'
import { tree, Workspace, LocalFilesystem } from './helpers.mjs'

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

test('a store write that destroy() cut short lands before the next workspace on the directory undoes it: no ghost, nothing lost', async (t) => {
  const { Workspace } = await import('./helpers.mjs')
  const dir = path.join(tree(t, {}), 'persist')
  const vec = (s) => [s.length % 7, 1, s.includes('x') ? 1 : 0, 0.5]
  const embedder = Object.assign(async (ts) => ts.map(vec), { batch: true })
  const data = new Map()
  let hold = null // the next write waits for this promise
  const store = {
    async createIndex() {},
    async upsert({ ids, metadata }) { const h = hold; hold = null; await h; ids.forEach((id, i) => data.set(id, metadata[i].text)) },
    async deleteVectors({ ids }) { const h = hold; hold = null; await h; for (const id of ids ?? []) data.delete(id) },
    async query({ topK }) { return [...data].slice(0, topK).map(([id, text]) => ({ id, score: 0.5, metadata: { id, text } })) },
  }
  const open = () => new Workspace({ id: 'g', bm25: true, embedder, embedderId: 'e', vectorStore: store, persist: { dir } })
  const a = open()
  await a.init()
  await a.index('kept', 'hello kept')
  // An upsert that answers 300 ms after destroy() cut its call short.
  let answer
  hold = new Promise((r) => { answer = r })
  const cut = a.index('api/x', 'hello x').catch((e) => e)
  while (hold) await new Promise((r) => setTimeout(r, 5))
  setTimeout(answer, 300)
  await a.destroy()
  assert.equal((await cut).name, 'WorkspaceNotReadyError')
  const b = open()
  const report = await b.init()
  assert.deepEqual(report.warnings, [])
  await new Promise((r) => setTimeout(r, 400))
  assert.deepEqual([...data.keys()].sort(), ['kept'], 'the late write is undone, not left behind')
  assert.deepEqual((await b.search('hello', { mode: 'vector', topK: 10 })).map((r) => r.id), ['kept'])
  // A delete cut short the same way: the next writer puts the vector back after it.
  hold = new Promise((r) => { answer = r })
  const gone = b.unindex('kept').catch((e) => e)
  while (hold) await new Promise((r) => setTimeout(r, 5))
  setTimeout(answer, 300)
  await b.destroy()
  await gone
  const c = open()
  await c.init()
  await new Promise((r) => setTimeout(r, 400))
  const bm25 = (await c.search('hello', { mode: 'bm25', topK: 10 })).map((r) => r.id)
  const vector = (await c.search('hello', { mode: 'vector', topK: 10 })).map((r) => r.id)
  assert.deepEqual(vector, bm25, 'the store holds what the index holds')
  await c.destroy()
})

test('destroy() during a large indexMany() without vectors: a call that rejects left nothing in the saved snapshot, one that resolves left all of it (it rejected while destroy()\'s save kept its documents)', async (t) => {
  const { Workspace } = await import('./helpers.mjs')
  const docs = Array.from({ length: 8000 }, (_, i) => ({ path: `batch/${i}`, content: `qqbatch word${i} ${'lorem ipsum dolor '.repeat(8)}` }))
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
  let seen = { rejected: 0, resolved: 0 }
  for (let delay = 0; delay < 400 && seen.resolved === 0; delay += 2) {
    const dir = path.join(tree(t), 'p')
    const open = () => new Workspace({ id: 'cut', bm25: true, gitHistory: false, persist: { dir } })
    const first = open()
    await first.init()
    await first.index('kept', 'qqbatch kept')
    const write = first.indexMany(docs).then(() => 'resolved', (e) => e.name)
    await sleep(delay)
    await first.destroy()
    const outcome = await write
    const next = open()
    await next.init()
    const documents = next.stats().documents
    await next.destroy()
    if (outcome === 'resolved') {
      seen.resolved++
      assert.equal(documents, 8001, `destroy() after ${delay} ms: the call resolved, its documents are saved`)
    } else {
      seen.rejected++
      assert.equal(outcome, 'WorkspaceNotReadyError')
      assert.equal(documents, 1, `destroy() after ${delay} ms: the call rejected, so nothing of it is saved`)
    }
  }
  assert.ok(seen.rejected > 0, `destroy() at once cuts the call short: ${JSON.stringify(seen)}`)
})

test('destroy() waits for a write that had begun to change the index however long it takes (past its 10 s wait: the call resolved, and the save left it out)', { timeout: 60_000 }, (t) => {
  const dir = path.join(tree(t), 'p')
  const script = `
    const { Workspace } = require(${JSON.stringify(entry)})
    const ws = new Workspace({ id: 'slow', bm25: true, gitHistory: false, persist: { dir: ${JSON.stringify(dir)} } })
    ws.init().then(async () => {
      await ws.index('kept', 'qqslow kept')
      await ws.save() // (nothing left for a later save to pick up by chance)
      const docs = [{ path: 'late/1', content: 'qqslow written while destroy() waits' }, { path: 'late/2', content: 'qqslow too' }]
      const write = ws.indexMany(docs).then(() => 'resolved', (e) => e.name)
      await new Promise((r) => setTimeout(r, 2000)) // (its 11 s change of the index under way)
      await ws.destroy()
      console.log(await write)
    })`
  // The bulk write's change of the index takes 11 s (a test pause), past destroy()'s 10 s wait for a write in its turn.
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, WORKSPACE_SEARCH_TEST_PAUSE: 'committed-bulk:11000' } })
  assert.equal(run.status, 0, run.stderr)
  const outcome = run.stdout.trim().split('\n').at(-1)
  const reopen = spawnSync(process.execPath, ['-e', `
    const { Workspace } = require(${JSON.stringify(entry)})
    const ws = new Workspace({ id: 'slow', bm25: true, gitHistory: false, persist: { dir: ${JSON.stringify(dir)} } })
    ws.init().then(async () => { console.log(ws.stats().documents); await ws.destroy() })`], { encoding: 'utf8' })
  assert.equal(outcome, 'resolved')
  assert.equal(reopen.stdout.trim(), '3', 'the resolved write is in the saved snapshot')
})

test('a save() that destroy() cut short has written and renamed its snapshot before destroy() resolves and lets the lock go (it went on after: a temporary file left, rmSync ENOTEMPTY)', async (t) => {
  const line = 'lorem ipsum dolor sit amet router parse user token search index vector alpha beta gamma\n'
  const files = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`src/f${i}.md`, `file ${i} unique${i}\n${line.repeat(600)}`]))
  const base = tree(t, files)
  const root = tree(t)
  let left = 0
  for (let i = 0; i < 8; i++) {
    const dir = path.join(root, `idx${i}`)
    const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['src'], persist: { dir } })
    await ws.init()
    await ws.save()
    // Nothing changed since: destroy() saves nothing of its own, and let the lock go at once.
    const cut = ws.save().catch((e) => e)
    await new Promise((resolve) => setTimeout(resolve, i % 3))
    await ws.destroy()
    if (fs.readdirSync(dir).some((name) => name.startsWith('snapshot.wss.tmp'))) left++
    fs.rmSync(dir, { recursive: true })
    await cut
  }
  assert.equal(left, 0, 'temporary snapshot files left after destroy() resolved')
})
