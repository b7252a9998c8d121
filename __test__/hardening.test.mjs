// Hostile input and faults (issue 13): each case as a user, a hostile file
// tree or a failing service meets it. Cases that used to kill the process
// run in a child process whose exit status is checked.
import test from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Workspace, LocalFilesystem, WorkspaceNotReadyError, lib, tree, ids } from './helpers.mjs'
import { hashEmbed } from './vector-helpers.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** Runs `source` (an ES module using the package as `pkg`) in a child process: its exit status and output. */
function child(source, timeout = 60_000) {
  const prelude = `import { createRequire } from 'node:module'\nconst pkg = createRequire(${JSON.stringify(`${ROOT}/`)})('./index.js')\n`
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', prelude + source], { encoding: 'utf8', timeout })
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr }
}

const embedder = async (text) => hashEmbed(text)

test('1, 2, 11: cyclic, deeply nested and non-plain values are TypeErrors, in a process that lives on', () => {
  const r = child(`
    const { Workspace, LocalVector } = pkg
    const cyclic = { a: 1 }; cyclic.self = cyclic
    const deep = (n) => { const root = {}; let d = root; for (let i = 0; i < n; i++) { d.x = {}; d = d.x } return root }
    let andDeep = { a: 1 }; for (let i = 0; i < 5000; i++) andDeep = { $and: [andDeep] }
    const ws = new Workspace({ bm25: true })
    const vec = new Workspace({ bm25: true, embedder: async (t) => [t.length, 1] })
    const lv = new LocalVector(); await lv.createIndex({ indexName: 'x', dimension: 2 })
    const cases = {
      cycleIndex: () => ws.index('p', 't', { metadata: cyclic }),
      cycleIndexMany: () => ws.indexMany([{ path: 'p', content: 't', metadata: cyclic }]),
      cycleUpsert: () => lv.upsert({ indexName: 'x', vectors: [[1, 0]], metadata: [cyclic] }),
      deep10k: () => ws.index('p', 't', { metadata: deep(10000) }),
      filterDeep10k: () => ws.search('t', { filter: deep(10000) }),
      deep5kEmbedder: () => vec.index('p', 't', { metadata: deep(5000) }),
      and5kHybrid: () => vec.search('t', { mode: 'hybrid', filter: andDeep }),
      date: () => ws.index('p', 't', { metadata: { when: new Date() } }),
      map: () => ws.index('p', 't', { metadata: { m: new Map() } }),
      instance: () => ws.index('p', 't', { metadata: { c: new (class Point {})() } }),
      bigint: () => ws.index('p', 't', { metadata: { n: 10n } }),
    }
    const out = {}
    for (const [name, run] of Object.entries(cases)) {
      try { await run(); out[name] = 'accepted' } catch (e) { out[name] = e.constructor.name + ': ' + e.message }
    }
    await ws.index('u', 'undefined dropped', { metadata: { a: undefined, b: 1 } })
    out.undefinedDropped = JSON.stringify((await ws.search('undefined dropped'))[0].metadata)
    out.stillEmpty = ws.stats().documents
    console.log(JSON.stringify(out))
  `)
  assert.equal(r.signal, null, r.stderr)
  assert.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1))
  assert.match(out.cycleIndex, /^TypeError: index\(\) options\.metadata\.self refers back to itself \(a cycle\)/)
  assert.match(out.cycleIndexMany, /^TypeError: docs\[0\]\.metadata\.self refers back to itself/)
  assert.match(out.cycleUpsert, /^TypeError: metadata\[0\]\.self refers back to itself/)
  assert.match(out.deep10k, /^TypeError: index\(\) options\.metadata is nested more than 64 levels deep$/)
  assert.match(out.filterDeep10k, /^TypeError: filter is nested more than 64 levels deep$/)
  assert.match(out.deep5kEmbedder, /^TypeError: .* nested more than 64 levels deep$/)
  assert.match(out.and5kHybrid, /^TypeError: filter is nested more than 64 levels deep$/)
  assert.match(out.date, /^TypeError: .*metadata\.when must be a plain object or array, got a Date$/)
  assert.match(out.map, /got a Map$/)
  assert.match(out.instance, /got a Point$/)
  assert.match(out.bigint, /^TypeError: .*metadata\.n must be JSON data, got a bigint$/)
  assert.equal(out.undefinedDropped, '{"b":1}')
  assert.equal(out.stillEmpty, 1)
})

test('1: a vector store answering with cyclic metadata is an error of that call', async () => {
  const store = {
    async upsert() {},
    async query() {
      const metadata = { id: 'a', text: 'x' }
      metadata.loop = metadata
      return [{ id: 'a', score: 0.5, metadata }]
    },
  }
  const ws = new Workspace({ bm25: true, vectorStore: store, embedder })
  const answered = (e) => e.name === 'VectorStoreError' && e.code === 'VECTOR_STORE' && e.workspaceId === ws.id
  await assert.rejects(ws.search('x', { mode: 'vector' }), (e) => answered(e) && /vectorStore\.query answer\[0\]\.metadata\.loop .*cycle/.test(e.message))
  // What a getter of the answer throws is the store's own: it reaches the caller as it was.
  const own = new RangeError('the getter refused')
  store.query = async () => [{ id: 'a', get score() { throw own } }]
  await assert.rejects(ws.search('x', { mode: 'vector' }), (e) => e === own)
  store.query = async () => ({ hits: [] })
  await assert.rejects(ws.search('x', { mode: 'vector' }), (e) => answered(e) && /must resolve to Array.*got an object/.test(e.message))
})

test('3: a panic inside an entry point is a thrown error, not an abort', async () => {
  const { createRequire } = await import('node:module')
  const binding = createRequire(import.meta.url)('../binding.js')
  assert.throws(() => binding.__panicForTest(), /^Error: workspace-search internal error: a panic raised on purpose by a test$/)
  // The guard every synchronous entry point runs in: the addon still works.
  assert.equal(new Workspace({ bm25: true }).stats().documents, 0)
})

test('5: FIFOs, devices and sockets are skipped with a reason; init() does not hang', async (t) => {
  const dir = tree(t, { 'docs/a.md': 'plain text file about routers\n' })
  execFileSync('mkfifo', [path.join(dir, 'docs/pipe')])
  let devices = true
  try {
    execFileSync('mknod', [path.join(dir, 'docs/null'), 'c', '1', '3']) // like /dev/null
    execFileSync('mknod', [path.join(dir, 'docs/zero'), 'c', '1', '5']) // like /dev/zero
  } catch {
    devices = false // not root: the FIFO and the socket still test the rule
  }
  const server = net.createServer().listen(path.join(dir, 'docs/sock'))
  await new Promise((resolve) => server.once('listening', resolve))
  t.after(() => server.close())
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs', 'docs/pipe'] })
  const report = await ws.init()
  assert.equal(report.indexed, 1)
  const reasons = Object.fromEntries(report.skipped.map((s) => [s.path, s.reason]))
  assert.equal(reasons['docs/pipe'], 'not a regular file (a FIFO)')
  assert.equal(reasons['docs/sock'], 'not a regular file (a socket)')
  if (devices) {
    assert.equal(reasons['docs/null'], 'not a regular file (a character device)')
    assert.equal(reasons['docs/zero'], 'not a regular file (a character device)')
  }
  assert.deepEqual(ids(await ws.search('routers')), ['docs/a.md'])
})

test('6: maxFileSize (default 10 MiB) skips larger files; binary files are told from their first 8 KiB', async (t) => {
  const dir = tree(t, { 'docs/small.md': 'small text\n', 'docs/bin.dat': Buffer.concat([Buffer.from([0, 1, 2]), Buffer.alloc(1 << 20, 97)]) })
  const sparse = path.join(dir, 'docs/sparse.txt')
  fs.writeFileSync(sparse, 'start\n')
  fs.truncateSync(sparse, 1 << 30) // 1 GiB, sparse: nothing is read
  fs.writeFileSync(path.join(dir, 'docs/mid.md'), 'x '.repeat(3000))
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'] })
  const report = await ws.init()
  const reasons = Object.fromEntries(report.skipped.map((s) => [s.path, s.reason]))
  assert.equal(reasons['docs/sparse.txt'], `larger than maxFileSize (${1 << 30} bytes > 10485760)`)
  assert.equal(reasons['docs/bin.dat'], 'binary')
  assert.equal(report.indexed, 2)
  const small = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], maxFileSize: 1000 })
  const r2 = await small.init()
  assert.deepEqual(r2.skipped.find((s) => s.path === 'docs/mid.md'), { path: 'docs/mid.md', reason: 'larger than maxFileSize (6000 bytes > 1000)' })
  assert.throws(() => new Workspace({ maxFileSize: 0 }), { name: 'RangeError', message: 'maxFileSize must be an integer >= 1, got 0' })
})

test('7: file names that are not UTF-8 are skipped with a reason, never merged', async (t) => {
  const dir = tree(t, { 'docs/ok.md': 'valid name alpha\n' })
  const raw = (bytes) => Buffer.concat([Buffer.from(`${dir}/docs/`), Buffer.from(bytes)])
  fs.writeFileSync(raw([0x61, 0xff, 0x2e, 0x6d, 0x64]), 'bad name one alpha\n')
  fs.writeFileSync(raw([0x61, 0xfe, 0x2e, 0x6d, 0x64]), 'bad name two alpha\n')
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'] })
  const report = await ws.init()
  assert.equal(report.indexed, 1)
  assert.equal(ws.stats().documents, 1)
  const skipped = report.skipped.filter((s) => s.reason === 'file name is not valid UTF-8')
  assert.equal(skipped.length, 2)
  assert.ok(skipped.every((s) => s.path.startsWith('docs/a')))
})

test('8: an unindex() whose store deletion fails changes nothing', async () => {
  const held = new Map()
  let failDeletes = true
  const store = {
    async upsert({ ids, vectors, metadata }) {
      ids.forEach((id, i) => held.set(id, { vector: vectors[i], metadata: metadata[i] }))
    },
    async query({ queryVector, topK }) {
      return [...held].map(([id, v]) => ({ id, score: queryVector.reduce((s, x, i) => s + x * v.vector[i], 0), metadata: v.metadata })).sort((a, b) => b.score - a.score).slice(0, topK)
    },
    async deleteVectors({ ids }) {
      if (failDeletes) throw new Error('store is down')
      for (const id of ids ?? []) held.delete(id)
    },
  }
  const ws = new Workspace({ bm25: true, vectorStore: store, embedder })
  await ws.index('doc', 'the document about routers')
  await assert.rejects(ws.unindex('doc'), /store is down/)
  assert.deepEqual(ids(await ws.search('routers', { mode: 'bm25' })), ['doc'])
  assert.deepEqual(ids(await ws.search('routers', { mode: 'vector' })), ['doc'])
  assert.equal(ws.stats().vectors, 1)
  failDeletes = false
  await ws.clear()
  assert.equal(held.size, 0, 'clear() still knows the vector and deletes it')
})

test('9, 10: destroy() settles pending calls at once; nothing reaches the store after it', async () => {
  const calls = []
  let release
  const late = new Promise((resolve) => {
    release = resolve
  })
  const store = { upsert: async (args) => calls.push(['upsert', args.ids]), query: async () => [] }
  const ws = new Workspace({ bm25: true, vectorStore: store, embedder: async (t) => (await late, hashEmbed(t)) })
  // Handlers attached at once: the calls may reject before they are awaited.
  const pending = assert.rejects(ws.index('doc', 'late text'), (err) => err instanceof WorkspaceNotReadyError && err.message === 'Workspace is not ready (status: destroyed)')
  const pendingSearch = assert.rejects(ws.search('late', { mode: 'vector' }), WorkspaceNotReadyError)
  await new Promise((resolve) => setTimeout(resolve, 20))
  await ws.destroy()
  await pending
  await pendingSearch
  release()
  await new Promise((resolve) => setTimeout(resolve, 50))
  assert.deepEqual(calls, [])
})

test('9, 10: destroy() with writes queued behind a pending call: every one rejects and none reaches any store', async () => {
  const { LocalVector } = lib
  for (const kind of ['JavaScript', 'LocalVector', 'embedded']) {
    const calls = []
    let release
    const late = new Promise((resolve) => {
      release = resolve
    })
    const recording = {
      createIndex: async (args) => calls.push(['createIndex', args.indexName]),
      upsert: async (args) => calls.push(['upsert', args.ids]),
      query: async () => [],
      deleteVectors: async (args) => calls.push(['deleteVectors', args.ids ?? args.filter]),
    }
    const local = new LocalVector()
    const vectorStore = { JavaScript: recording, LocalVector: local, embedded: undefined }[kind]
    const ws = new Workspace({ bm25: true, vectorStore, searchIndexName: 'queued', embedder: async (t) => (t.includes('late') && (await late), hashEmbed(t)) })
    const settled = []
    const track = (name, call) =>
      call.then(
        () => settled.push(`${name}: resolved`),
        (err) => settled.push(`${name}: ${err instanceof WorkspaceNotReadyError ? err.message : err}`),
      )
    // The first waits for its embedder; the others are embedded (or need no
    // embedding) and wait for their turn behind it.
    const all = [
      track('index (pending)', ws.index('doc', 'late text')),
      track('index', ws.index('a', 'queued one')),
      track('indexMany', ws.indexMany([{ path: 'b', content: 'queued two' }])),
      track('unindex', ws.unindex('x')),
      track('removeByPrefix', ws.removeByPrefix('a')),
      track('clear', ws.clear()),
      track('save', ws.save()),
    ]
    await new Promise((resolve) => setTimeout(resolve, 30))
    await ws.destroy()
    release()
    await Promise.all(all)
    await new Promise((resolve) => setTimeout(resolve, 50))
    const notReady = ['index (pending)', 'index', 'indexMany', 'unindex', 'removeByPrefix', 'clear', 'save'].map((n) => `${n}: Workspace is not ready (status: destroyed)`)
    assert.deepEqual(settled.sort(), notReady.sort(), kind)
    assert.deepEqual(calls, [], kind)
    assert.deepEqual(await local.listIndexes(), [], kind)
  }
})

test('10: a callback rejecting with the message napi-rs gives a dropped promise ("oneshot canceled") fails the call at once', async () => {
  // Such a promise was taken for one collected unsettled, and the call
  // waited for its timeout; the callbacks' own answers tell them apart now.
  const embedder = async (t) => {
    if (t.includes('odd')) throw new Error('oneshot canceled')
    return hashEmbed(t)
  }
  const ws = new Workspace({ bm25: true, embedder, embedTimeoutMs: 60_000 })
  await ws.index('doc', 'first version')
  const started = Date.now()
  await assert.rejects(ws.index('doc', 'odd text'), { message: 'oneshot canceled' })
  assert.ok(Date.now() - started < 10_000, 'failed at once, not at the 60 s timeout')
  assert.equal((await ws.search('first version', { mode: 'bm25' }))[0].content, 'first version')
  const store = { get: async () => { throw new Error('oneshot canceled') }, put: async () => ({ etag: 'x' }) }
  const fromStore = new Workspace({ id: 't', bm25: true, persist: { store, storeTimeoutMs: 60_000 } })
  const at = Date.now()
  await assert.rejects(fromStore.init(), (e) => e.code === 'SNAPSHOT_STORE' && /oneshot canceled/.test(e.message))
  assert.ok(Date.now() - at < 10_000, 'failed at once, not at the 60 s timeout')
})

test('a single-text embedder that hangs fails init() in a few timeouts, not one per file: once none of its first calls answered in time, the rest are not called; one that refuses at once is still asked for every file', async (t) => {
  const files = {}
  for (let i = 0; i < 120; i++) files[`f${String(i).padStart(3, '0')}.md`] = `text number ${i}\n`
  const basePath = tree(t, files)
  let calls = 0
  const hangs = new Workspace({ filesystem: new LocalFilesystem({ basePath }), bm25: true, autoIndexPaths: ['.'], embedTimeoutMs: 300, embedder: () => { calls++; return new Promise(() => {}) } })
  t.after(() => hangs.destroy())
  const report = await hangs.init()
  assert.equal(report.failed.length, 120)
  assert.ok(calls <= 2 * 8, `${calls} calls (it made one per file, 8 at a time, each waiting 300 ms)`)
  for (const f of report.failed) assert.match(f.error, /Embedder did not answer within 300 ms/)
  assert.ok(report.failed.some((f) => /none of its first 8 calls answered in time; not called/.test(f.error)))
  assert.equal((await hangs.search('number', { mode: 'bm25', topK: 200 })).length, 120, 'keyword search has every file')
  let refusals = 0
  const refuses = new Workspace({ filesystem: new LocalFilesystem({ basePath }), bm25: true, autoIndexPaths: ['.'], embedder: async (text) => { refusals++; if (text.includes('7')) throw new Error('too long'); return hashEmbed(text) } })
  t.after(() => refuses.destroy())
  const refused = await refuses.init()
  assert.equal(refusals, 120)
  assert.deepEqual(refused.failed.map((f) => f.path), Object.keys(files).filter((f) => files[f].includes('7')))
})

test('10: an embedder that never answers: embedTimeoutMs fails the call, state kept; the process exits on its own', async () => {
  const ws = new Workspace({ bm25: true, embedder: async (t) => (t.includes('hang') ? new Promise(() => {}) : hashEmbed(t)), embedTimeoutMs: 1000 })
  await ws.index('doc', 'first version')
  await assert.rejects(ws.index('doc', 'hang forever'), { name: 'EmbedderError', code: 'EMBEDDER', workspaceId: ws.id, message: 'Embedder did not answer within 1000 ms (index()).' })
  assert.equal((await ws.search('first version', { mode: 'bm25' }))[0].content, 'first version')
  await ws.index('other', 'later writes still go through')
  assert.equal(ws.stats().documents, 2)
  assert.throws(() => new Workspace({ embedder, embedTimeoutMs: -1 }), { name: 'RangeError' })
  // A never-settling embedder and destroy(): the pending call rejects and
  // nothing holds the event loop, so the process ends by itself.
  const r = child(`
    const ws = new pkg.Workspace({ bm25: true, embedder: () => new Promise(() => {}) })
    const pending = ws.index('doc', 'text').catch((e) => console.log(e.name))
    setTimeout(() => ws.destroy(), 50)
    await pending
  `, 20_000)
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout.trim(), 'WorkspaceNotReadyError')
})

test('10: a vector store whose reads never answer: vectorStoreTimeoutMs fails the search, state kept', async () => {
  const held = new Map()
  let hang = false
  const never = () => new Promise(() => {})
  const store = {
    async upsert({ ids, vectors, metadata }) {
      ids.forEach((id, i) => held.set(id, { vector: vectors[i], metadata: metadata[i] }))
    },
    async query({ queryVector, topK }) {
      if (hang) return never()
      return [...held].map(([id, v]) => ({ id, score: queryVector.reduce((s, x, i) => s + x * v.vector[i], 0), metadata: v.metadata })).sort((a, b) => b.score - a.score).slice(0, topK)
    },
  }
  const ws = new Workspace({ bm25: true, vectorStore: store, embedder, vectorStoreTimeoutMs: 1000 })
  await ws.index('doc', 'the document about routers')
  hang = true
  const late = { name: 'VectorStoreError', code: 'VECTOR_STORE', workspaceId: ws.id, message: 'vectorStore.query did not answer within 1000 ms.' }
  await assert.rejects(ws.search('routers', { mode: 'vector' }), late)
  await assert.rejects(ws.search('routers'), late, 'hybrid too')
  assert.deepEqual(ids(await ws.search('routers', { mode: 'bm25' })), ['doc'])
  hang = false
  assert.deepEqual(ids(await ws.search('routers', { mode: 'vector', topK: 1 })), ['doc'])
  await ws.destroy()
  // createIndex is bounded too (it lands the same way however late); its
  // failure is let go, as Mastra lets it go, and the write goes on.
  const slowIndex = new Workspace({ bm25: true, vectorStore: { ...store, createIndex: never }, embedder, vectorStoreTimeoutMs: 1000 })
  await slowIndex.index('other', 'a document whose index creation never answers')
  assert.ok(held.has('other'))
  await slowIndex.destroy()
  for (const [bad, name] of [[0, 'RangeError'], [-1, 'RangeError'], [1.5, 'RangeError'], ['100', 'TypeError']]) {
    assert.throws(() => new Workspace({ bm25: true, vectorStore: store, embedder, vectorStoreTimeoutMs: bad }), { name, message: /vectorStoreTimeoutMs/ })
  }
})

test('12: startLineOffset is bounded and line ranges never wrap', async () => {
  const ws = new Workspace({ bm25: true })
  await assert.rejects(ws.index('p', 'x', { startLineOffset: 2 ** 32 - 1 }), { name: 'RangeError', message: 'index() options.startLineOffset must be at most 1000000000, got 4294967295' })
  await ws.index('p', 'one\ntwo routers', { startLineOffset: 1_000_000_000 })
  assert.deepEqual((await ws.search('routers'))[0].lineRange, { start: 1_000_000_001, end: 1_000_000_001 })
})

test('13: splitPattern takes any JavaScript RegExp: look-ahead, look-behind, back-references', async () => {
  const pattern = /[\s,]+|(?=[A-Z])/
  // Mastra's order: lowercase (off here, so the look-ahead sees capitals), punctuation, split.
  const ws = new Workspace({ bm25: { tokenize: { splitPattern: pattern, lowercase: false, splitIdentifiers: false, stem: false } } })
  await ws.index('a', 'fooBar,baz qux')
  await ws.index('b', 'foobar')
  assert.deepEqual(ids(await ws.search('Bar')), ['a'])
  assert.deepEqual('fooBar,baz qux'.split(pattern), ['foo', 'Bar', 'baz', 'qux'])
  const behind = new Workspace({ bm25: { tokenize: { splitPattern: /(?<=-)/, removePunctuation: false } } })
  await behind.index('c', 'ab-cd')
  assert.deepEqual(ids(await behind.search('cd')), ['c'])
  const backref = new Workspace({ bm25: { tokenize: { splitPattern: /(\w)\1/ } } })
  await backref.index('d', 'fooaabar')
  assert.deepEqual(ids(await backref.search('bar')), ['d'])
})

test('14: a vector store method replaced after construction is the one called', async () => {
  const store = { upserts: 0, async upsert() {}, async query() { return [] } }
  const ws = new Workspace({ bm25: true, vectorStore: store, embedder })
  const original = store.upsert
  store.upsert = async function (args) {
    this.upserts += args.ids.length
    return original.call(this, args)
  }
  await ws.index('doc', 'spied on')
  assert.equal(store.upserts, 1)
  store.deleteVectors = async function () {
    this.deleted = true
  }
  await ws.unindex('doc')
  assert.equal(store.deleted, true)
})

test('the addon takes no static TLS: it loads beside native modules that do (four copies in one process)', (t) => {
  // glibc keeps a small reserve of static TLS for modules loaded after
  // start; a module that needs some (initial-exec TLS, as mimalloc's
  // default) takes part of it, and the next one that needs some fails with
  // "cannot allocate memory in static TLS block". Copies of this addon
  // stand in for other such modules here.
  const binary = fs.readdirSync(ROOT).find((f) => f.endsWith('.node'))
  const glibc = process.platform === 'linux' && process.report.getReport().header.glibcVersionRuntime
  if (!glibc || !binary) return t.skip('a glibc Linux build in the package folder')
  const dirs = []
  for (let i = 0; i < 4; i++) {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-copy-'))
    for (const f of ['index.js', 'binding.js', 'package.json', binary]) fs.copyFileSync(path.join(ROOT, f), path.join(d, f))
    fs.cpSync(path.join(ROOT, 'lib'), path.join(d, 'lib'), { recursive: true })
    dirs.push(d)
  }
  try {
    const source = `for (const d of ${JSON.stringify(dirs)}) new (require(d).Workspace)({ bm25: true }); console.log('loaded')`
    const r = spawnSync(process.execPath, ['-e', source], { encoding: 'utf8', timeout: 60_000 })
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /loaded/)
  } finally {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
  }
})

test("the addon's allocator leaves the host's huge-page setting alone and does not advise its arenas for huge pages", (t) => {
  if (process.platform !== 'linux') return t.skip('transparent huge pages are a Linux setting')
  // mimalloc madvised its 1 GiB arenas MADV_HUGEPAGE, and the kernel then
  // zeroed each 2 MiB page whole when it was first touched (a fifth of
  // init()'s CPU). Built with `no_thp` it does not; its other way out,
  // prctl(PR_SET_THP_DISABLE), would change the whole host process.
  const source = `
    const fs = require('node:fs'), os = require('node:os'), path = require('node:path')
    const thp = () => /THP_enabled:\\s*(\\d)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 'none'
    const before = thp() // before the addon loads
    const pkg = require(${JSON.stringify(ROOT)})
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-thp-'))
    for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(dir, 'f' + i + '.ts'), 'export function parseUser' + i + '(id: string) { return id.split("-") }\\n'.repeat(40))
    const ws = new pkg.Workspace({ filesystem: new pkg.LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'] })
    await ws.init()
    if ((await ws.search('parse user', { topK: 3 })).length !== 3) throw new Error('no results')
    const advised = fs.readFileSync('/proc/self/smaps', 'utf8').split(/\\n(?=[0-9a-f]+-[0-9a-f]+ )/)
      .filter((m) => /VmFlags:.* hg/.test(m))
      .map((m) => m.split(' ')[0].split('-').map((x) => parseInt(x, 16)))
      .filter(([start, end]) => end - start >= 256 * 2 ** 20)
    await ws.destroy()
    fs.rmSync(dir, { recursive: true, force: true })
    console.log(JSON.stringify({ before, after: thp(), advised: advised.length }))`
  // (A host may turn THP off for the process with MIMALLOC_ALLOW_THP=0,
  // docs/benchmarks.md; the child runs without it.)
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MIMALLOC_')))
  const r = spawnSync(process.execPath, ['-e', `(async () => {${source}})().catch((e) => { console.error(e); process.exit(1) })`], { encoding: 'utf8', timeout: 60_000, env })
  assert.equal(r.status, 0, r.stderr)
  const { before, after, advised } = JSON.parse(r.stdout.trim().split('\n').pop())
  assert.equal(after, before, 'the process-wide THP setting is unchanged')
  // The setting is inherited, and this test's process loaded the addon
  // already: the test runner's (which did not) is the setting before it.
  let runner = null
  try {
    runner = /THP_enabled:\s*(\d)/.exec(fs.readFileSync(`/proc/${process.ppid}/status`, 'utf8'))?.[1] ?? null
  } catch {}
  const hostChose = Object.keys(process.env).some((k) => k.startsWith('MIMALLOC_'))
  if (runner !== null && !hostChose) assert.equal(after, runner, "as the test runner's, which never loaded the addon")
  assert.equal(advised, 0, 'no mapping of 256 MiB or more is advised for huge pages')
})
