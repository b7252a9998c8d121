// The addon in worker_threads: a Worker terminated while its workspace
// waits on the user's JavaScript (an embedder call that will never be
// answered now) leaves nothing behind in the process: its watcher, threads
// and persist lock go as destroy() would take them (they were kept until
// embedTimeoutMs, and for good with a store write in flight).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import { fileURLToPath } from 'node:url'
import { tree, eventually, Workspace, LocalFilesystem } from './helpers.mjs'

const linux = process.platform === 'linux'
const INDEX = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'index.js')

/** Open inotify instances of this process. */
const inotify = () => fs.readdirSync('/proc/self/fd').filter((fd) => {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`) === 'anon_inode:inotify'
  } catch {
    return false
  }
}).length

const WORKER = `
const { workerData, parentPort } = require('node:worker_threads')
const { Workspace, LocalFilesystem } = require(workerData.index)
const ws = new Workspace({
  filesystem: new LocalFilesystem({ basePath: workerData.dir }), autoIndexPaths: ['docs'], bm25: true, watch: true,
  persist: { dir: workerData.persist },
  ...(workerData.mode === 'embedder' ? { embedder: async () => { parentPort.postMessage('waiting'); return new Promise(() => {}) } } : {}),
  ...(workerData.mode === 'store' ? {
    embedder: async (texts) => [1, 0, 0],
    vectorStore: {
      createIndex: async () => {}, describeIndex: async () => ({ dimension: 3, count: 0, metric: 'cosine' }),
      query: async () => [], deleteVector: async () => {}, deleteVectors: async () => {}, listIndexes: async () => [],
      upsert: async () => { parentPort.postMessage('waiting'); return new Promise(() => {}) },
    },
  } : {}),
})
ws.init()
`

for (const mode of ['embedder', 'store']) {
  test(`a Worker terminated with ${mode === 'embedder' ? 'an embedder call' : 'a vector store write'} in flight leaves no watcher, and its persist directory's lock is given up`, { skip: !linux && 'inotify and /proc are Linux-only' }, async (t) => {
    const dir = tree(t, { 'docs/a/b/x.md': 'hello world' })
    const persist = `${dir}-persist`
    t.after(() => fs.rmSync(persist, { recursive: true, force: true }))
    const before = inotify()
    // (One with a store write: a write under way keeps the lock, so a second could not start.)
    for (let i = 0; i < (mode === 'store' ? 1 : 3); i++) {
      const worker = new Worker(WORKER, { eval: true, workerData: { index: INDEX, dir, persist, mode } })
      await new Promise((resolve, reject) => {
        worker.once('message', resolve)
        worker.once('error', reject)
        worker.once('exit', (code) => reject(new Error(`the worker exited (${code}) before its call was in flight`)))
      })
      await worker.terminate()
    }
    await eventually('the workers\' watchers closed', async () => inotify() === before)
    if (mode === 'store') return // (a write under way keeps the lock, as destroy() keeps it: docs/persistence.md)
    const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), autoIndexPaths: ['docs'], bm25: true, persist: { dir: persist } })
    t.after(() => ws.destroy())
    await ws.init()
    assert.equal(await ws.save(), true, 'the lock is free: this workspace saves')
  })
}
