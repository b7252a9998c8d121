// persist: { store } against a real S3-compatible server (s3-helpers.mjs)
// through the official AWS SDK: a tenant built in one process is attached
// in another with the same answers and no embedder call; of two processes
// saving one tenant exactly one wins each round and nothing is lost; a
// store that is down, slow or holds a truncated part gives a typed error
// or a rebuild, never a wrong answer.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import path from 'node:path'
import v8 from 'node:v8'
import vm from 'node:vm'
import { tree, ids, eventually } from './helpers.mjs'
import { bucket, client, endpoint, serverBin, startServer, unavailable } from './s3-helpers.mjs'

const require = createRequire(import.meta.url)
const { Workspace, LocalFilesystem, s3SnapshotStore, SnapshotConflictError, SnapshotStoreError, WorkspaceError } =
  require('../index.js')
const skip = unavailable() ?? false
const child = new URL('./tenant-child.mjs', import.meta.url).pathname

/** Runs tenant-child.mjs with `job`; resolves its steps by name (and `send`: a line to its stdin). */
function run(job) {
  const p = spawn(process.execPath, [child, JSON.stringify(job)], { stdio: ['pipe', 'pipe', 'inherit'] })
  const steps = {}
  const waiting = {}
  let out = ''
  p.stdout.on('data', (d) => {
    out += d
    let nl
    while ((nl = out.indexOf('\n')) >= 0) {
      const step = JSON.parse(out.slice(0, nl))
      out = out.slice(nl + 1)
      steps[step.step] = step
      waiting[step.step]?.(step)
    }
  })
  const exited = new Promise((resolve) => p.once('exit', resolve))
  return {
    step: (name) => (steps[name] ? Promise.resolve(steps[name]) : new Promise((r) => (waiting[name] = r))),
    send: (line) => p.stdin.write(line + '\n'),
    exited,
  }
}

const DOCS = [
  ['notes/router.md', 'The router matches paths with a trie of segments.'],
  ['notes/cache.md', 'The cache keeps the last responses for a minute.'],
  ['notes/auth.md', 'Tokens are checked before the router runs.'],
]
const QUERIES = ['router trie', 'cache responses', 'tokens checked']

test('a tenant built in one process attaches in another: same answers, no embedder call', { skip }, async (t) => {
  const url = await endpoint(t)
  const job = { endpoint: url, bucket: await bucket(url), prefix: 'tenants/a/', id: 'tenant-a', queries: QUERIES }
  const built = run({ ...job, index: DOCS, save: 'now' })
  const first = await built.step('searched')
  assert.equal((await built.step('saved')).saved, true)
  await built.exited
  const attached = run(job)
  const a = await attached.step('attached')
  assert.deepEqual(a.warnings, [])
  assert.equal(a.documents, 3)
  const again = await attached.step('searched')
  await attached.exited
  assert.deepEqual(again.results, first.results, 'the same results and scores in every mode')
  // The ledger travelled with the snapshot: nothing is embedded again, the queries only.
  assert.equal(a.embedded, 0)
  assert.equal(again.embedded, QUERIES.length)
  assert.equal(first.embedded, DOCS.length + QUERIES.length)
  assert.deepEqual(ids(first.results['router trie'].bm25.map(([id]) => ({ id }))).slice(0, 1), ['notes/router.md'])
})

test('two processes saving one tenant: exactly one wins each round, and nothing it saved is lost', { skip }, async (t) => {
  const url = await endpoint(t)
  const job = { endpoint: url, bucket: await bucket(url), prefix: '', id: 'tenant-b', queries: [] }
  const seed = run({ ...job, index: [DOCS[0]], save: 'now' })
  assert.equal((await seed.step('saved')).saved, true)
  await seed.exited
  const kept = new Set([DOCS[0][0]])
  for (let round = 0; round < 4; round++) {
    const writers = [0, 1].map((w) =>
      run({ ...job, index: [[`round-${round}/writer-${w}.md`, `round ${round} writer ${w} text`]], save: 'on-stdin' }),
    )
    // Both attached the same version before either saves.
    await Promise.all(writers.map((w) => w.step('searched')))
    for (const w of writers) w.send('save')
    const saved = await Promise.all(writers.map((w) => w.step('saved')))
    // The loser's destroy() saves nothing and does not fail.
    assert.deepEqual((await Promise.all(writers.map((w) => w.step('destroyed')))).map((d) => d.error), [null, null])
    await Promise.all(writers.map((w) => w.exited))
    const winners = saved.filter((s) => s.saved === true)
    assert.equal(winners.length, 1, `round ${round}: ${JSON.stringify(saved)}`)
    const loser = saved.find((s) => s.saved !== true)
    assert.equal(loser.error, 'SnapshotConflictError')
    assert.equal(loser.code, 'SNAPSHOT_CONFLICT')
    kept.add(`round-${round}/writer-${saved.indexOf(winners[0])}.md`)
    // A fresh attach holds every document a winner saved.
    const reader = run({ ...job })
    const r = await reader.step('attached')
    await reader.exited
    assert.equal(r.documents, kept.size, `round ${round}`)
  }
})

/**
 * A SnapshotStore in memory with S3's conditional writes; `objects` is what
 * it holds. `ranges: false`: a store that answers every read whole.
 */
function memoryStore({ ranges = true } = {}) {
  const objects = new Map()
  let version = 0
  const memory = {
    get: async (key, range) => {
      const o = objects.get(key)
      if (!o) return null
      return { bytes: range && ranges ? o.bytes.subarray(range.start, range.end) : o.bytes, etag: o.etag }
    },
    put: async (key, bytes, { ifMatch, ifNoneMatch } = {}) => {
      const there = objects.get(key)
      if ((ifNoneMatch && there) || (ifMatch && there?.etag !== ifMatch)) return { conflict: true }
      const etag = `v${++version}`
      objects.set(key, { bytes: Uint8Array.from(bytes), etag })
      return { etag }
    },
  }
  return { objects, memory }
}

/** `memoryStore()` with a `delete` that records the keys it deletes; its parts and its manifest, read. */
function deletingStore() {
  const { objects, memory } = memoryStore()
  const deleted = []
  const store = { ...memory, delete: async (key) => (deleted.push(key), objects.delete(key)) }
  const parts = () => [...objects.keys()].filter((k) => k.startsWith('parts/')).sort()
  const manifest = () => JSON.parse(Buffer.from(objects.get('manifest.json').bytes).toString())
  return { objects, store, deleted, parts, manifest }
}

function storeWorkspace(store, extra = {}) {
  return new Workspace({ id: 'tenant-c', bm25: true, persist: { store, storeTimeoutMs: 1500 }, ...extra })
}

const ownServer = serverBin() ? false : 'needs the S3 test server binary (tools/s3-server) to stop one of its own'

test('a store that is down fails init() and save() with SnapshotStoreError; the state in memory stays', { skip: ownServer }, async (t) => {
  const server = await startServer(t)
  const store = s3SnapshotStore({ client: client(server.endpoint), bucket: await bucket(server.endpoint) })
  const ws = storeWorkspace(store)
  await ws.init()
  await ws.indexMany(DOCS.map(([path, content]) => ({ path, content })))
  await server.stop()
  await new Promise((r) => setTimeout(r, 100))
  const e = await ws.save().then(() => null, (err) => err)
  assert.ok(e instanceof SnapshotStoreError, String(e))
  assert.equal(e.code, 'SNAPSHOT_STORE')
  assert.match(ws.stats().saveError, /persist\.store/)
  assert.deepEqual(ids(await ws.search('router trie', { topK: 1 })), ['notes/router.md'])
  const other = storeWorkspace(store)
  await assert.rejects(other.init(), (err) => err instanceof SnapshotStoreError)
  assert.equal(other.status, 'error')
  await ws.destroy().catch(() => {})
})

test("a store's own failures are SnapshotStoreError: one that throws, one that hangs past storeTimeoutMs", { skip: false }, async () => {
  const throws = { get: async () => { throw 'the store is down' }, put: async () => ({ etag: 'x' }), head: async () => null }
  const e = await storeWorkspace(throws).init().then(() => null, (err) => err)
  assert.ok(e instanceof SnapshotStoreError, String(e))
  assert.match(e.message, /the store is down/)
  assert.equal(e.cause, 'the store is down', 'what the store threw is the cause, as thrown')
  // An SDK's error object is the cause itself (its name, its $metadata...).
  const sdkError = Object.assign(new Error('Service Unavailable'), { name: 'ServiceUnavailable', $metadata: { httpStatusCode: 503 } })
  const fails = { get: async () => { throw sdkError }, put: async () => ({ etag: 'x' }), head: async () => null }
  const f = await storeWorkspace(fails).init().then(() => null, (err) => err)
  assert.ok(f instanceof SnapshotStoreError, String(f))
  assert.equal(f.cause, sdkError)
  assert.match(f.message, /Service Unavailable/)
  // Its promise is held by nothing: collected while init() waits (the
  // collector forced here), it must still wait for the timeout, as one
  // still held does, not fail at once with whatever napi-rs says then.
  let asked = false
  const hangs = { get: () => { asked = true; return new Promise(() => {}) }, put: async () => ({ etag: 'x' }), head: async () => null }
  const started = Date.now()
  const waiting = storeWorkspace(hangs).init().then(() => null, (err) => err)
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc')
  for (let i = 0; !asked && i < 500; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    gc()
  }
  const h = await waiting
  assert.ok(h instanceof SnapshotStoreError, String(h))
  assert.match(h.message, /did not answer within 1500 ms/)
  assert.equal(h.cause, undefined, 'a timeout has no cause')
  assert.ok(Date.now() - started < 10_000)
  // A store answering the wrong shape is refused as well.
  const wrong = { get: async () => ({ bytes: 'not bytes', etag: 'x' }), put: async () => ({ etag: 'x' }), head: async () => null }
  await assert.rejects(storeWorkspace(wrong).init(), (err) => err instanceof SnapshotStoreError)
  // undefined (a get that forgot its return) is not "no such object": the tenant would start empty.
  const forgot = { get: async () => undefined, put: async () => ({ etag: 'x' }), head: async () => null }
  await assert.rejects(storeWorkspace(forgot).init(), (err) => err instanceof SnapshotStoreError && /must resolve to/.test(err.message))
})

test("s3SnapshotStore: a put on condition of an etag whose object is gone (S3 answers 404 NoSuchKey) is a conflict, as a 412 is; a 404 to a put without that condition is the store's failure", async () => {
  const notFound = () => Object.assign(new Error('The specified key does not exist.'), { name: 'NoSuchKey', $metadata: { httpStatusCode: 404 } })
  const fake = { send: async () => { throw notFound() } }
  const store = s3SnapshotStore({ client: fake, bucket: 'b', prefix: 't/' })
  assert.deepEqual(await store.put('manifest.json', Buffer.from('{}'), { ifMatch: '"e1"' }), { conflict: true })
  await assert.rejects(store.put('part', Buffer.from('x')), { name: 'NoSuchKey' })
  const precondition = { send: async () => { throw Object.assign(new Error('At least one of the pre-conditions you specified did not hold'), { name: 'PreconditionFailed', $metadata: { httpStatusCode: 412 } }) } }
  assert.deepEqual(await s3SnapshotStore({ client: precondition, bucket: 'b', prefix: 't/' }).put('manifest.json', Buffer.from('{}'), { ifNoneMatch: '*' }), { conflict: true })
})

test("s3SnapshotStore refuses a prefix with a '.', '..' or empty segment: a store that resolves them (this repository's test server did) kept one tenant under another's keys", () => {
  const sent = []
  const client = { send: async (command) => sent.push(command) }
  for (const prefix of ['tenants/x/../victim/', '../escaped/', './t/', 'a/./b/', 'x/../', 'acme//x/', '/t/', '//']) {
    assert.throws(() => s3SnapshotStore({ client, bucket: 'b', prefix }), { name: 'TypeError', message: /prefix must have no '\.', '\.\.' or empty segment/ }, prefix)
  }
  // Dots inside a segment, or a last segment joined to the key, are names like any other.
  for (const prefix of ['t.v1/', '...x/', 'a..b/', 'x/..', 'x/.', '..', '']) s3SnapshotStore({ client, bucket: 'b', prefix })
  assert.equal(sent.length, 0)
})

test('a truncated part is not used: the index part is rebuilt from the files, with a warning; the texts part is read again from the files, or fails searches typed', { skip }, async (t) => {
  const url = await endpoint(t)
  const s3 = client(url)
  const name = await bucket(url)
  const base = tree(t, Object.fromEntries(DOCS.map(([p, c]) => [`docs/${p}`, c])))
  const make = (prefix) =>
    new Workspace({
      id: 'tenant-d',
      filesystem: new LocalFilesystem({ basePath: base }),
      autoIndexPaths: ['docs'],
      bm25: true,
      persist: { store: s3SnapshotStore({ client: s3, bucket: name, prefix }) },
    })
  const { GetObjectCommand, PutObjectCommand } = require('@aws-sdk/client-s3')
  const truncate = async (prefix, which) => {
    const manifest = JSON.parse(await (await s3.send(new GetObjectCommand({ Bucket: name, Key: `${prefix}manifest.json` }))).Body.transformToString())
    const key = `${prefix}${manifest[which].key}`
    const part = await (await s3.send(new GetObjectCommand({ Bucket: name, Key: key }))).Body.transformToByteArray()
    await s3.send(new PutObjectCommand({ Bucket: name, Key: key, Body: part.subarray(0, part.length - 100) }))
  }
  const first = make('d/')
  await first.init() // a full build is saved before init() resolves
  const expected = await first.search('router trie', { topK: 3 })
  await first.destroy()
  await truncate('d/', 'index')
  const second = make('d/')
  const report = await second.init()
  assert.equal(report.warnings.length, 1, JSON.stringify(report.warnings))
  assert.match(report.warnings[0], /truncated.*rebuilt from the files/)
  assert.deepEqual(await second.search('router trie', { topK: 3 }), expected)
  await second.destroy()

  // The texts part: attached without it; every text is read again from its file.
  await truncate('d/', 'texts')
  const third = make('d/')
  assert.deepEqual((await third.init()).warnings, [])
  assert.deepEqual(await third.search('router trie', { topK: 3 }), expected)
  assert.equal(await third.save(), true, 'the snapshot is replaced, whole')
  await third.destroy()
  const fourth = make('d/')
  await fourth.init()
  assert.deepEqual(await fourth.search('router trie', { topK: 3 }), expected)
  await fourth.destroy()

  // Documents given to index() have no file to read again: searches that need their texts fail, typed.
  const records = () => new Workspace({ id: 'tenant-e', bm25: true, persist: { store: s3SnapshotStore({ client: s3, bucket: name, prefix: 'e/' }) } })
  const built = records()
  await built.init()
  await built.indexMany(DOCS.map(([path, content]) => ({ path, content })))
  assert.equal(await built.save(), true)
  await built.destroy()
  await truncate('e/', 'texts')
  const attached = records()
  await attached.init()
  assert.equal(attached.stats().documents, 3, 'ranked without the texts')
  await assert.rejects(attached.search('router trie', { topK: 3 }), (e) => e instanceof SnapshotStoreError && /texts part/.test(e.message))
  await assert.rejects(attached.save(true), (e) => e instanceof SnapshotStoreError)
  await attached.destroy().catch(() => {})
})

test('persist.store needs the tenant id', () => {
  const store = { get: async () => null, put: async () => ({ etag: 'x' }), head: async () => null }
  assert.throws(
    () => new Workspace({ bm25: true, persist: { store } }),
    (e) => e instanceof WorkspaceError && e.code === 'INVALID_SEARCH_CONFIG' && /needs an id/.test(e.message),
  )
  assert.throws(() => new Workspace({ id: 'x', bm25: true, persist: { store: { get: 1 } } }), TypeError)
})

/** `s3SnapshotStore` with its manifest writes changed by `wrap(put, key, bytes, conditions)`. */
function wrappedStore(s3, name, prefix, wrap) {
  const inner = s3SnapshotStore({ client: s3, bucket: name, prefix })
  return { ...inner, put: (key, bytes, conditions) => (key === 'manifest.json' ? wrap(inner.put, key, bytes, conditions) : inner.put(key, bytes, conditions)) }
}

test('saves of one workspace follow each other; a manifest write whose answer was lost, or retried into itself, is confirmed by reading it back', { skip }, async (t) => {
  const url = await endpoint(t)
  const s3 = client(url)
  const name = await bucket(url)
  let mode = 'plain'
  const store = wrappedStore(s3, name, 'r/', async (put, key, bytes, conditions) => {
    const answer = await put(key, bytes, conditions)
    if (mode === 'lost') throw new Error('socket hang up') // it landed; the answer did not come back
    if (mode === 'retried') return (await put(key, bytes, conditions), { conflict: true }) // the retry meets the write
    return answer
  })
  const ws = storeWorkspace(store, { id: 'tenant-r' })
  await ws.init()
  for (const [i, m] of ['plain', 'plain', 'lost', 'retried', 'plain'].entries()) {
    mode = m
    await ws.index(`doc-${i}.md`, `saved ${i} in mode ${m}`)
    assert.equal(await ws.save(), true, `save ${i} (${m})`)
  }
  await ws.destroy()
  const again = storeWorkspace(s3SnapshotStore({ client: s3, bucket: name, prefix: 'r/' }), { id: 'tenant-r' })
  await again.init()
  assert.equal(again.stats().documents, 5)
  await again.destroy()
})

test('after a conflict, writes that cannot be saved make destroy() reject with SnapshotConflictError', { skip }, async (t) => {
  const url = await endpoint(t)
  const s3 = client(url)
  const name = await bucket(url)
  const make = () => storeWorkspace(s3SnapshotStore({ client: s3, bucket: name, prefix: 'c/' }), { id: 'tenant-x' })
  const [a, b] = [make(), make()]
  await a.init()
  await b.init()
  await a.index('a.md', 'from a')
  await b.index('b.md', 'from b')
  assert.equal(await a.save(), true)
  await assert.rejects(b.save(), (e) => e instanceof SnapshotConflictError && e.code === 'SNAPSHOT_CONFLICT')
  await b.index('late.md', 'written after the conflict')
  await assert.rejects(b.destroy(), (e) => e instanceof SnapshotConflictError && /not saved/.test(e.message))
  await a.destroy()
})

test('a snapshot this workspace cannot use is not replaced by documents it never read', { skip }, async (t) => {
  const url = await endpoint(t)
  const s3 = client(url)
  const name = await bucket(url)
  const store = () => s3SnapshotStore({ client: s3, bucket: name, prefix: 'u/' })
  const first = storeWorkspace(store(), { id: 'tenant-u' })
  await first.init()
  await first.indexMany(DOCS.map(([path, content]) => ({ path, content })))
  await first.save()
  await first.destroy()
  const other = new Workspace({ id: 'tenant-u', bm25: { bm25: { k1: 2 } }, persist: { store: store() } })
  const report = await other.init()
  assert.match(report.warnings.join(), /other options.*rebuilt/)
  await other.index('lone.md', 'one document')
  const e = await other.save().then(() => null, (err) => err)
  assert.ok(e instanceof SnapshotStoreError, String(e))
  assert.match(e.message, /could not be used/)
  await other.destroy().catch(() => {})
  const back = storeWorkspace(store(), { id: 'tenant-u' })
  await back.init()
  assert.equal(back.stats().documents, 3, 'the three documents are still there')
  await back.destroy()
})

test('destroy() after a store failure rejects with SnapshotStoreError, its message clean', { skip: ownServer }, async (t) => {
  const server = await startServer(t)
  const ws = storeWorkspace(s3SnapshotStore({ client: client(server.endpoint), bucket: await bucket(server.endpoint) }))
  await ws.init()
  await ws.index('a.md', 'unsaved')
  await server.stop()
  await new Promise((r) => setTimeout(r, 100))
  const e = await ws.destroy().then(() => null, (err) => err)
  assert.ok(e instanceof SnapshotStoreError, String(e))
  assert.ok(!e.message.includes('\u0000'), e.message)
  assert.equal(ws.status, 'destroyed')
})

test('cacheDir: a warm attach fetches the manifest only and maps the cached part; the cache stays within cacheMaxBytes; a damaged cached part is fetched again', { skip }, async (t) => {
  const url = await endpoint(t)
  const s3 = client(url)
  const name = await bucket(url)
  const cacheDir = tree(t)
  const gets = []
  const counted = (prefix) => {
    const inner = s3SnapshotStore({ client: s3, bucket: name, prefix })
    return { ...inner, get: (key, range) => (gets.push(key), inner.get(key, range)) }
  }
  const make = (tenant, maxBytes) =>
    new Workspace({ id: tenant, bm25: true, persist: { store: counted(`${tenant}/`), cacheDir, cacheMaxBytes: maxBytes } })
  const first = make('k1', 1 << 30)
  await first.init()
  await first.indexMany(DOCS.map(([path, content]) => ({ path, content })))
  assert.equal(await first.save(), true)
  const expected = await first.search('router trie', { topK: 3 })
  await first.destroy()
  gets.length = 0
  const warm = make('k1', 1 << 30)
  await warm.init()
  assert.deepEqual(gets, ['manifest.json'], 'the part came from the cache')
  assert.deepEqual(await warm.search('router trie', { topK: 3 }), expected)
  await warm.destroy()
  // A damaged cached snapshot is not used: its parts are fetched again (and cached anew).
  const fs = await import('node:fs')
  const cached = fs.readdirSync(cacheDir).filter((f) => f.endsWith('.wss'))
  assert.equal(cached.length, 1)
  const file = `${cacheDir}/${cached[0]}`
  const bytes = fs.readFileSync(file)
  fs.chmodSync(file, 0o644)
  bytes[40] ^= 0xff
  fs.writeFileSync(file, bytes)
  gets.length = 0
  const repaired = make('k1', 1 << 30)
  await repaired.init()
  assert.deepEqual(await repaired.search('router trie', { topK: 3 }), expected)
  // Counted once the search has its texts: their GET starts beside the
  // attach, and init() may resolve before it is sent.
  assert.deepEqual(gets.map((k) => k.split('/')[0]).sort(), ['manifest.json', 'parts', 'parts'], gets.join())
  await repaired.destroy()
  // What a cold attach fetched (the index part, then the texts beside it) is cached whole.
  gets.length = 0
  const again = make('k1', 1 << 30)
  await again.init()
  assert.deepEqual(gets, ['manifest.json'])
  assert.deepEqual(await again.search('router trie', { topK: 3 }), expected)
  await again.destroy()
  // Bounded: with room for one part, the older one goes.
  const size = fs.statSync(`${cacheDir}/${fs.readdirSync(cacheDir).find((f) => f.endsWith('.wss'))}`).size
  const second = make('k2', size + 10)
  await second.init()
  await second.index('other.md', 'another tenant entirely')
  await second.save()
  await second.destroy()
  assert.equal(fs.readdirSync(cacheDir).filter((f) => f.endsWith('.wss')).length, 1)
})

test("cacheKey: the manifest last seen is kept in cacheDir, and a warm attach loads its snapshot beside the GET; a manifest that moved meanwhile is what the attach answers from; a note that is garbage or a FIFO is passed over", { skip, timeout: 60_000 }, async (t) => {
  const fs = await import('node:fs')
  const { execFileSync } = await import('node:child_process')
  const url = await endpoint(t)
  const s3 = client(url)
  const name = await bucket(url)
  const cacheDir = tree(t)
  const store = (prefix) => s3SnapshotStore({ client: s3, bucket: name, prefix })
  assert.equal(store('p1/').cacheKey, `s3://${name}/p1/`)
  // `holdManifest`: the manifest's GET answers only once the cached snapshot's mtime moved (a load
  // of it began) or a second passed, and tells which.
  let held = null
  const holding = (inner) => ({
    ...inner,
    get: async (key, range) => {
      if (key === 'manifest.json' && held) {
        const { file, since } = held
        const start = Date.now()
        while (fs.statSync(file).mtimeMs <= since && Date.now() - start < 1000) await new Promise((r) => setTimeout(r, 5))
        held.loadedFirst = fs.statSync(file).mtimeMs > since
      }
      return inner.get(key, range)
    },
  })
  const make = (dir) => new Workspace({ id: 'p1', bm25: true, persist: { store: holding(store('p1/')), ...(dir ? { cacheDir: dir } : {}) } })
  const stored = async () => {
    const sdk = require('@aws-sdk/client-s3')
    const out = await s3.send(new sdk.GetObjectCommand({ Bucket: name, Key: 'p1/manifest.json' }))
    return Buffer.from(await out.Body.transformToByteArray())
  }
  const note = () => {
    const notes = fs.readdirSync(cacheDir).filter((f) => f.endsWith('.manifest'))
    assert.equal(notes.length, 1, notes.join())
    return `${cacheDir}/${notes[0]}`
  }
  const first = make(cacheDir)
  await first.init()
  await first.indexMany(DOCS.map(([path, content]) => ({ path, content })))
  assert.equal(await first.save(), true)
  await first.destroy()
  assert.deepEqual(fs.readFileSync(note()), await stored(), 'a save notes the manifest it wrote')
  // Another server saves the tenant: the note here still names the snapshot cached before.
  const other = make(null)
  await other.init()
  await other.index('notes/zebra.md', 'zebra stripes everywhere')
  assert.equal(await other.save(), true)
  await other.destroy()
  assert.notDeepEqual(fs.readFileSync(note()), await stored())
  const warm = make(cacheDir)
  await warm.init()
  assert.deepEqual(ids(await warm.search('zebra stripes', { topK: 3 })), ['notes/zebra.md'], 'the manifest fetched, not the one noted')
  await warm.destroy()
  assert.deepEqual(fs.readFileSync(note()), await stored(), 'an attach notes the manifest it attached')
  const expected = ids(await (async () => {
    const w = make(cacheDir)
    await w.init()
    const r = await w.search('router trie', { topK: 3 })
    await w.destroy()
    return r
  })())
  assert.equal(expected[0], 'notes/router.md')
  // The noted snapshot's load begins before the manifest's GET answers (it marks the file used first).
  const noted = JSON.parse(fs.readFileSync(note(), 'utf8'))
  const file = `${cacheDir}/${noted.index.hash}-${noted.texts.hash}.wss`
  fs.utimesSync(file, new Date(2000, 0, 1), new Date(2000, 0, 1))
  held = { file, since: fs.statSync(file).mtimeMs }
  const early = make(cacheDir)
  await early.init()
  assert.equal(held.loadedFirst, true, 'the cached snapshot was being loaded while the manifest was fetched')
  held = null
  assert.deepEqual(ids(await early.search('router trie', { topK: 3 })), expected)
  await early.destroy()
  // A note that is not a manifest, then one that is a FIFO (a read would block): passed over.
  fs.writeFileSync(note(), 'not a manifest')
  const garbage = make(cacheDir)
  await garbage.init()
  assert.deepEqual(ids(await garbage.search('router trie', { topK: 3 })), expected)
  await garbage.destroy()
  assert.deepEqual(fs.readFileSync(note()), await stored(), 'a note that is not a manifest is written anew')
  const path = note()
  fs.rmSync(path)
  try {
    execFileSync('mkfifo', [path])
  } catch {
    return t.skip('no mkfifo here')
  }
  const fifo = make(cacheDir)
  await fifo.init()
  assert.deepEqual(ids(await fifo.search('router trie', { topK: 3 })), expected)
  await fifo.destroy()
})

test('persist.store.cacheKey must be a string', () => {
  const store = { get: async () => null, put: async () => ({ etag: 'x' }), cacheKey: 42 }
  assert.throws(() => new Workspace({ id: 't', bm25: true, persist: { store, cacheDir: '/tmp/never-made' } }), /persist\.store\.cacheKey must be a string/)
})

test('a texts part whose GET fails fails the search that waits for it with SnapshotStoreError, what the store threw its cause; the next search fetches it again', async () => {
  const { objects, memory } = memoryStore({ ranges: false })
  const writer = storeWorkspace(memory)
  await writer.init()
  await writer.indexMany(DOCS.map(([path, content]) => ({ path, content })))
  assert.equal(await writer.save(), true)
  await writer.destroy()
  const texts = JSON.parse(new TextDecoder().decode(objects.get('manifest.json').bytes)).texts.key
  const sdkError = Object.assign(new Error('SlowDown'), { name: 'SlowDown', $metadata: { httpStatusCode: 503 } })
  let down = true
  const flaky = { ...memory, get: async (key) => (key === texts && down ? Promise.reject(sdkError) : memory.get(key)) }
  const ws = storeWorkspace(flaky)
  await ws.init()
  const e = await ws.search('router trie', { topK: 1 }).then(() => null, (err) => err)
  assert.ok(e instanceof SnapshotStoreError, String(e))
  assert.equal(e.cause, sdkError, 'the SDK error is the cause')
  assert.match(e.message, /SlowDown/)
  down = false
  assert.deepEqual(ids(await ws.search('router trie', { topK: 1 })), ['notes/router.md'])
  await ws.destroy()
  // A fetch that failed in the background, before any call waited for it,
  // is tried again for the next call: a save once the store is back lands.
  down = true
  const later = storeWorkspace(flaky)
  await later.init()
  await new Promise((r) => setTimeout(r, 200))
  down = false
  await later.indexMany([{ path: 'notes/new.md', content: 'a note written later' }])
  assert.equal(await later.save(), true)
  await later.destroy()
})

test("a large texts part is read by range: a search reads its results' frames and does not wait for the whole part; a store that ignores ranges, or a damaged frame, falls back to it", async () => {
  const { objects, memory } = memoryStore()
  // 20 MB of text, so that the texts part has more than 16 frames: words
  // drawn from a seeded generator (zstd must not shrink it to nothing).
  let seed = 7
  const word = () => ((seed = (seed * 1103515245 + 12345) >>> 0) % 50000).toString(36)
  const docs = Array.from({ length: 500 }, (_, n) => ({
    path: `docs/${n}.txt`,
    content: `document ${n} marker${n}x\n` + Array.from({ length: 10000 }, word).join(' '),
  }))
  const writer = storeWorkspace(memory)
  await writer.init()
  await writer.indexMany(docs)
  assert.equal(await writer.save(), true)
  await writer.destroy()
  const manifest = JSON.parse(new TextDecoder().decode(objects.get('manifest.json').bytes))
  assert.ok(manifest.texts.frames?.length > 16, `${manifest.texts.frames?.length} frames`)
  const texts = manifest.texts.key
  const attach = async (wrap) => {
    const gets = []
    let release
    const whole = new Promise((r) => (release = r))
    const store = { ...memory, get: async (key, range) => {
      gets.push(range ? `${key} ${range.start}-${range.end}` : key)
      if (key === texts && !range) await whole // the whole part: only once released
      return wrap(key, range)
    } }
    const ws = storeWorkspace(store)
    await ws.init()
    return { ws, gets, release }
  }
  // By range: the search answers while the whole part is held back.
  let inFlight = 0
  let most = 0
  const a = await attach(async (key, range) => {
    if (key !== texts || !range) return memory.get(key, range)
    most = Math.max(most, ++inFlight)
    await new Promise((r) => setTimeout(r, 50))
    inFlight--
    return memory.get(key, range)
  })
  const [hit] = await a.ws.search('marker123x', { topK: 1 })
  assert.equal(hit.id, 'docs/123.txt')
  assert.equal(hit.content, docs[123].content)
  const ranged = a.gets.filter((g) => g.startsWith(`${texts} `))
  assert.ok(ranged.length >= 1 && ranged.length <= 2, a.gets.join('\n'))
  // The store has answered a range with it: a later search asks for all
  // its frames at once (none alone first), by range while the whole part
  // (asked for in the background after a search) is held back.
  most = 0
  const two = await a.ws.search('marker250x marker450x', { topK: 2 })
  assert.deepEqual(two.map((h) => h.content).sort(), [docs[250].content, docs[450].content].sort())
  const more = a.gets.filter((g) => g.startsWith(`${texts} `)).length - ranged.length
  assert.ok(more >= 2 && more <= 4, a.gets.join('\n'))
  assert.ok(most >= 2, `its ${more} frames were asked for together (${most} at most at once)`)
  a.release()
  await a.ws.destroy()
  // A store that answers the whole object to a range: the frame is taken out of it.
  const b = await attach((key) => memory.get(key))
  assert.equal((await b.ws.search('marker7x', { topK: 1 }))[0].content, docs[7].content)
  b.release()
  await b.ws.destroy()
  // A damaged frame is not used: the search waits for the whole part.
  const c = await attach(async (key, range) => {
    const got = await memory.get(key, range)
    if (!range || key !== texts) return got
    const bytes = Uint8Array.from(got.bytes)
    bytes[bytes.length >> 1] ^= 0x55
    return { ...got, bytes }
  })
  const pending = c.ws.search('marker300x', { topK: 1 })
  let answered = false
  pending.then(() => (answered = true), () => (answered = true))
  await new Promise((r) => setTimeout(r, 200))
  assert.equal(answered, false, 'a damaged frame is never read: the whole part is waited for')
  c.release()
  const [late] = await pending
  assert.equal(late.content, docs[300].content)
  await c.ws.destroy()
  // A save writes every text: it fetches the whole part.
  const d = await attach((key, range) => memory.get(key, range))
  assert.ok(!d.gets.includes(texts), 'an attached tenant not searched fetches no texts')
  d.release()
  await d.ws.indexMany([{ path: 'docs/new.txt', content: 'a new document' }])
  assert.equal(await d.ws.save(), true)
  assert.ok(d.gets.includes(texts), d.gets.join('\n'))
  assert.equal((await d.ws.search('marker456x', { topK: 1 }))[0].content, docs[456].content)
  await d.ws.destroy()
  // A store that answers a range with the range at first, then the whole
  // part: of a search's reads answered whole at once, one is used, and it
  // serves every later read.
  let wholeFromNowOn = false
  // (d saved a new snapshot: its texts part has another key.)
  const e = await attach((key, range) => memory.get(key, wholeFromNowOn ? undefined : range))
  assert.equal((await e.ws.search('marker11x', { topK: 1 }))[0].content, docs[11].content)
  wholeFromNowOn = true
  const both = await e.ws.search('marker260x marker460x', { topK: 2 })
  assert.deepEqual(both.map((h) => h.content).sort(), [docs[260].content, docs[460].content].sort())
  const asked = e.gets.length
  assert.equal((await e.ws.search('marker360x', { topK: 1 }))[0].content, docs[360].content)
  assert.equal(e.gets.length, asked, `the whole part serves the next search: no read\n${e.gets.join('\n')}`)
  e.release()
  await e.ws.destroy()
})

test('a large index part is read in runs of frames by range, each unpacked as it arrives; a store that ignores ranges, or a damaged run, gives the whole part', async () => {
  const { objects, memory } = memoryStore()
  // Many short lines in many documents, so that the index part (postings,
  // line tables) has more than 16 frames.
  let seed = 11
  const word = () => ((seed = (seed * 1103515245 + 12345) >>> 0) % 400000).toString(36)
  const line = () => `${word()} ${word()}`
  const docs = Array.from({ length: 4000 }, (_, n) => ({
    path: `docs/${n}.txt`,
    content: `document ${n} marker${n}x\n` + Array.from({ length: 1000 }, line).join('\n'),
  }))
  const writer = storeWorkspace(memory)
  await writer.init()
  await writer.indexMany(docs)
  assert.equal(await writer.save(), true)
  const expected = await writer.search('marker321x', { topK: 3 })
  await writer.destroy()
  const manifest = JSON.parse(new TextDecoder().decode(objects.get('manifest.json').bytes))
  assert.ok(manifest.index.frames?.length > 16, `${manifest.index.frames?.length} frames`)
  const index = manifest.index.key
  const attach = async (wrap) => {
    const gets = []
    const store = { ...memory, get: async (key, range) => (gets.push(range ? `${key} ${range.start}-${range.end}` : key), wrap(key, range)) }
    const ws = storeWorkspace(store)
    await ws.init()
    return { ws, gets: () => gets.filter((g) => g.startsWith(index)) }
  }
  // By runs: a few ranged reads that cover the part, no whole read.
  const a = await attach((key, range) => memory.get(key, range))
  assert.deepEqual(await a.ws.search('marker321x', { topK: 3 }), expected)
  assert.ok(!a.gets().includes(index), 'not read whole')
  const runs = a.gets().map((g) => g.split(' ')[1].split('-').map(Number))
  assert.ok(runs.length >= 2 && runs.length <= 4 && runs.every((r) => r.length === 2), a.gets().join('\n'))
  runs.sort((x, y) => x[0] - y[0])
  assert.equal(runs[0][0], 0)
  assert.equal(runs.at(-1)[1], manifest.index.size)
  assert.ok(runs.every((r, i) => i === 0 || r[0] === runs[i - 1][1]), 'neighbouring runs, each byte once')
  await a.ws.destroy()
  // A store that answers the whole object to a range: used whole.
  const b = await attach((key) => memory.get(key))
  assert.deepEqual(await b.ws.search('marker321x', { topK: 3 }), expected)
  assert.ok(!b.gets().includes(index) && b.gets().length <= 4, `one whole answer used, no read again: ${b.gets().join('\n')}`)
  await b.ws.destroy()
  // A damaged run: the whole part is read, checked, and used.
  const c = await attach(async (key, range) => {
    const got = await memory.get(key, range)
    if (!range || key !== index || range.start !== 0) return got
    const bytes = Uint8Array.from(got.bytes)
    bytes[bytes.length >> 1] ^= 0x55
    return { ...got, bytes }
  })
  assert.ok(c.gets().includes(index), c.gets().join('\n'))
  assert.deepEqual(await c.ws.search('marker321x', { topK: 3 }), expected)
  await c.ws.destroy()
  // A run that is not there: the whole part says what the store holds.
  const d = await attach(async (key, range) => (range && key === index && range.start > 0 ? null : memory.get(key, range)))
  assert.deepEqual(await d.ws.search('marker321x', { topK: 3 }), expected)
  assert.ok(d.gets().includes(index), d.gets().join('\n'))
  // A run the store fails (S3's 416 for a range past a short object): the
  // whole part says what the store holds.
  const e = await attach(async (key, range) => {
    if (range && key === index && range.start > 0) throw Object.assign(new Error('InvalidRange'), { $metadata: { httpStatusCode: 416 } })
    return memory.get(key, range)
  })
  assert.deepEqual(await e.ws.search('marker321x', { topK: 3 }), expected)
  assert.ok(e.gets().includes(index), e.gets().join('\n'))
  await e.ws.destroy()
  await d.ws.destroy()
})

/**
 * 3,000 documents of many distinct words (more than 16 MB of postings),
 * drawn from `seed` with mulberry32 (a plain LCG's low bits repeat, and
 * zstd folds them away); `word` draws more.
 */
function manyWords(seed) {
  const random = () => {
    let r = (seed = (seed + 0x6d2b79f5) >>> 0)
    r = Math.imul(r ^ (r >>> 15), r | 1)
    r ^= r + Math.imul(r ^ (r >>> 7), r | 61)
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296
  }
  const word = () => Math.floor(random() * 300000).toString(36)
  const docs = Array.from({ length: 3000 }, (_, n) => ({
    path: `docs/${n}.txt`,
    content: `document ${n} marker${n}x\n` + Array.from({ length: 600 }, () => `${word()} ${word()} ${word()}`).join('\n'),
  }))
  return { docs, word }
}

test("a large index's postings are kept with the texts: an attach reads none of them, a search reads its terms' by range and answers as the writer did; a write waits for them all; a store that fails those reads fails that search, typed, and the next one reads them", async () => {
  const { objects, memory } = memoryStore()
  const { docs, word } = manyWords(5)
  const queries = ['marker321x', 'marker7x document', word() + ' ' + word(), 'document']
  const writer = storeWorkspace(memory)
  await writer.init()
  await writer.indexMany(docs)
  assert.equal(await writer.save(), true)
  const expected = await Promise.all(queries.map((q) => writer.search(q, { topK: 5 })))
  await writer.destroy()
  const manifest = JSON.parse(new TextDecoder().decode(objects.get('manifest.json').bytes))
  assert.equal(manifest.format, 'workspace-search/manifest-3')
  assert.ok(manifest.postingsApart.length >= 16 << 20, `${manifest.postingsApart.length} bytes of postings`)
  const texts = manifest.texts.key
  let failing = false
  let release
  const whole = new Promise((r) => (release = r))
  const gets = []
  const store = { ...memory, get: async (key, range) => {
    if (key === texts) gets.push(range ? range.end - range.start : 'whole')
    if (failing && key === texts) throw new Error('the store is down')
    if (key === texts && !range) await whole // the whole part: only once released
    return memory.get(key, range)
  } }
  const ws = storeWorkspace(store)
  await ws.init()
  assert.deepEqual(gets, [], 'the attach reads no postings (and no texts)')
  // The searches read their terms' postings and their results' texts by
  // range (the whole part, asked for after the first, is held back).
  for (const [i, q] of queries.entries()) assert.deepEqual(await ws.search(q, { topK: 5 }), expected[i], q)
  const ranged = gets.filter((g) => g !== 'whole')
  const read = ranged.reduce((sum, n) => sum + n, 0)
  assert.ok(ranged.length >= 2 && read < manifest.texts.size / 2, `${ranged.length} reads, ${read} of ${manifest.texts.size} bytes`)
  release()
  // A store that fails the reads a search needs: that search fails, typed;
  // the next one, with the store back, answers.
  const other = storeWorkspace(store)
  await other.init()
  failing = true
  await assert.rejects(other.search(queries[1], { topK: 5 }), (e) => e instanceof SnapshotStoreError, 'typed')
  failing = false
  assert.deepEqual(await other.search(queries[1], { topK: 5 }), expected[1])
  // A write made before init() goes into the loaded index: init() waits for
  // the postings; a store that fails them fails init(), and nothing is saved
  // over the tenant (destroy() included).
  const early = storeWorkspace({ ...memory, get: async (key, range) => {
    if (key === texts && !range) throw new Error('the store is down')
    return memory.get(key, range)
  } })
  await early.index('docs/early.txt', 'written before init')
  await assert.rejects(early.init(), (e) => e instanceof SnapshotStoreError)
  const etag = objects.get('manifest.json').etag
  await early.destroy().catch(() => {})
  assert.equal(objects.get('manifest.json').etag, etag, 'nothing saved over the tenant')
  // A write may touch any term: it waits for the part whole (held back
  // here), or fails typed when the store fails it, and lands once it is here.
  let releaseWrite
  const wholeForWrite = new Promise((r) => (releaseWrite = r))
  let failWhole = false
  // (A copy of the store: this workspace's saves do not move the tenant.)
  const copy = memoryStore()
  for (const [key, object] of objects) copy.objects.set(key, object)
  const writeStore = { ...copy.memory, get: async (key, range) => {
    if (key === texts && !range && failWhole) throw new Error('the store is down')
    if (key === texts && !range) await wholeForWrite
    return copy.memory.get(key, range)
  } }
  const writing = storeWorkspace(writeStore)
  await writing.init()
  failWhole = true
  await assert.rejects(writing.index('docs/new.txt', 'a fresh document'), (e) => e instanceof SnapshotStoreError)
  failWhole = false
  let landed = false
  const write = writing.index('docs/new.txt', 'a fresh document about zebrafish').then(() => (landed = true))
  await new Promise((r) => setTimeout(r, 200))
  assert.equal(landed, false, 'the write waits for the postings')
  releaseWrite()
  await write
  assert.deepEqual(ids(await writing.search('zebrafish', { topK: 1 })), ['docs/new.txt'])
  assert.deepEqual(ids(await writing.search(queries[0], { topK: 5 })), ids(expected[0]))
  await writing.destroy()
  await ws.index('docs/new.txt', 'a fresh document about zebrafish')
  assert.deepEqual(ids(await ws.search('zebrafish', { topK: 1 })), ['docs/new.txt'])
  // (One more document moves the scores a little, not the order.)
  assert.deepEqual(ids(await ws.search(queries[0], { topK: 5 })), ids(expected[0]))
  assert.equal(await ws.save(), true)
  await Promise.all([ws.destroy(), other.destroy()])
  // What it saved attaches again, with the new document.
  const again = storeWorkspace(memory)
  await again.init()
  assert.deepEqual(ids(await again.search('zebrafish', { topK: 1 })), ['docs/new.txt'])
  assert.deepEqual(ids(await again.search(queries[2], { topK: 5 })), ids(expected[2]))
  await again.destroy()
  // A texts part cut short: no search answers without its postings, each says why, typed.
  const saved = JSON.parse(new TextDecoder().decode(objects.get('manifest.json').bytes))
  const part = objects.get(saved.texts.key)
  objects.set(saved.texts.key, { ...part, bytes: part.bytes.subarray(0, 1000) })
  const cut = storeWorkspace(memory)
  await cut.init()
  for (let i = 0; i < 2; i++) {
    await assert.rejects(cut.search(queries[0], { topK: 5 }), (e) => e instanceof SnapshotStoreError && /postings cannot be read/.test(e.message))
  }
  await cut.destroy()
})

test("a texts part cut short, a tenant of files holding a document from index() saved in an earlier session: its searches and saves fail, typed, never answer without that document", async (t) => {
  const dir = tree(t, { 'a.md': 'file about routers numberax', 'b.md': 'file about caches numberbx' })
  const old = new Date(Date.now() - 3600_000)
  for (const f of ['a.md', 'b.md']) fs.utimesSync(path.join(dir, f), old, old)
  const { objects, memory } = memoryStore()
  const make = () => new Workspace({ id: 'tenant-m', bm25: true, filesystem: new LocalFilesystem({ basePath: dir }), autoIndexPaths: ['.'], persist: { store: memory, storeTimeoutMs: 5000 } })
  const writer = make()
  await writer.init()
  await writer.index('api/note.txt', 'apinote given by index()')
  assert.deepEqual(ids(await writer.search('apinote', { topK: 3 })), ['api/note.txt'])
  assert.equal(await writer.save(), true)
  await writer.destroy()
  const manifest = JSON.parse(new TextDecoder().decode(objects.get('manifest.json').bytes))
  const part = objects.get(manifest.texts.key)
  objects.set(manifest.texts.key, { ...part, bytes: part.bytes.subarray(0, part.bytes.length >> 1) })
  const attached = make()
  await attached.init()
  const typed = (e) => e instanceof SnapshotStoreError && /index\(\)/.test(e.message)
  await assert.rejects(attached.search('apinote', { topK: 3 }), typed)
  await assert.rejects(attached.save(), typed)
  const etag = objects.get('manifest.json').etag
  await attached.destroy().catch((e) => assert.ok(typed(e), String(e)))
  assert.equal(objects.get('manifest.json').etag, etag, 'nothing saved over the tenant')
})

// A tenant of index() documents with vectors (embedderId names the embedder).
async function vectorTenant(id) {
  const { hashEmbed } = await import('./vector-helpers.mjs')
  const { objects, memory } = memoryStore()
  const calls = []
  const embedderOf = (name, fail = () => false) => async (text) => {
    if (fail()) throw new Error(`${name} is down for this test`)
    calls.push(name)
    return hashEmbed(`${name} ${text}`)
  }
  const make = (embedder, embedderId) => new Workspace({ id, bm25: true, embedder, ...(embedderId ? { embedderId } : {}), persist: { store: memory, storeTimeoutMs: 5000 } })
  const writer = make(embedderOf('a'), 'model-a')
  await writer.init()
  const docs = Array.from({ length: 12 }, (_, i) => ({ path: `records/${i}.md`, content: `record ${i} about topic${i % 3} and zebra${i}` }))
  await writer.indexMany(docs)
  assert.equal(await writer.save(), true)
  await writer.destroy()
  return { objects, make, embedderOf, calls, docs }
}

test('a tenant of index() documents attached with another embedder keeps every document and embeds each text again, once; the next start reuses them', async () => {
  const { objects, make, embedderOf, calls, docs } = await vectorTenant('tenant-e')
  const other = make(embedderOf('b'), 'model-b')
  const report = await other.init()
  assert.match(report.warnings.join(' '), /the embedder changed/)
  assert.equal(other.stats().documents, docs.length)
  assert.equal(report.embedded, docs.length)
  assert.equal(calls.filter((c) => c === 'b').length, docs.length)
  assert.equal((await other.search('zebra7', { topK: 1, mode: 'bm25' }))[0]?.id, 'records/7.md')
  assert.equal((await other.search('record 7 about topic1 and zebra7', { topK: 1, mode: 'vector' }))[0]?.id, 'records/7.md')
  await other.destroy()
  const before = calls.length
  const next = make(embedderOf('b'), 'model-b')
  const again = await next.init()
  assert.deepEqual(again.warnings, [])
  assert.equal(again.embedded, 0)
  assert.equal(calls.length, before, 'no text embedded again')
  assert.equal(next.stats().documents, docs.length)
  await next.destroy()
  assert.ok(objects.has('manifest.json'))
})

test('a tenant of index() documents attached with another embedder that fails while embedding them again: init() keeps every document for keyword search, lists each in report.failed, and the next init() embeds them', async () => {
  const { objects, make, embedderOf, docs } = await vectorTenant('tenant-f2')
  let down = true
  const ws = make(embedderOf('b', () => down), 'model-b')
  const etag = objects.get('manifest.json').etag
  const failedStart = await ws.init()
  assert.deepEqual(failedStart.failed.map((f) => f.path).sort(), docs.map((d) => d.path).sort())
  assert.match(failedStart.failed[0].error, /^vectors not written: .*b is down for this test.*embedded again at the next init\(\)/)
  assert.equal(failedStart.embedded, 0)
  assert.equal(ws.stats().documents, docs.length, 'every document is kept')
  assert.equal((await ws.search('zebra5', { topK: 1, mode: 'bm25' }))[0]?.id, 'records/5.md')
  await ws.destroy()
  assert.equal(objects.get('manifest.json').etag, etag, 'nothing embedded: the tenant is not saved again for nothing')
  down = false
  const next = make(embedderOf('b'), 'model-b')
  const report = await next.init()
  assert.equal(report.embedded, docs.length)
  assert.deepEqual(report.failed, [])
  assert.equal((await next.search('record 5 about topic2 and zebra5', { topK: 1, mode: 'vector' }))[0]?.id, 'records/5.md')
  await next.destroy()
  const third = make(embedderOf('b'), 'model-b')
  assert.equal((await third.init()).embedded, 0)
  assert.equal((await third.search('record 5 about topic2 and zebra5', { topK: 1, mode: 'vector' }))[0]?.id, 'records/5.md')
  await third.destroy()
})

test('an embedder that throws when checked at attach fails init() with what it threw; nothing is loaded or saved, and init() again loads every document', async () => {
  const { objects, make, embedderOf, docs } = await vectorTenant('tenant-k')
  let down = true
  // Without embedderId the embedder is checked by one call (the canary).
  const ws = make(embedderOf('a', () => down))
  const etag = objects.get('manifest.json').etag
  await assert.rejects(ws.init(), /a is down for this test/)
  assert.equal(ws.stats().documents, 0)
  assert.equal(await ws.save(), false, 'nothing loaded: nothing saved over the tenant')
  assert.equal(objects.get('manifest.json').etag, etag)
  down = false
  await ws.init()
  assert.equal(ws.stats().documents, docs.length)
  assert.equal((await ws.search('zebra3', { topK: 1 }))[0]?.id, 'records/3.md')
  await ws.destroy()
  const attached = make(embedderOf('a'))
  await attached.init()
  assert.equal(attached.stats().documents, docs.length)
  await attached.destroy()
})

// A large tenant of files whose texts part (holding its postings) the store cut to half.
async function cutLargeTenant(t, id, { apiDoc = false, extra = {} } = {}) {
  const { objects, memory } = memoryStore()
  const { docs } = manyWords(13)
  const dir = tree(t, Object.fromEntries(docs.map((d) => [d.path, d.content])))
  const make = () => new Workspace({
    id,
    filesystem: new LocalFilesystem({ basePath: dir }),
    autoIndexPaths: ['.'],
    bm25: true,
    persist: { store: memory, storeTimeoutMs: 5000 },
    ...extra,
  })
  const writer = make()
  await writer.init() // a full build is saved before init() resolves
  const expected = await writer.search('marker77x', { topK: 3 })
  if (apiDoc) {
    await writer.index('api/note.txt', 'apinote given by index()')
    assert.equal(await writer.save(), true)
  }
  await writer.destroy()
  const manifest = JSON.parse(new TextDecoder().decode(objects.get('manifest.json').bytes))
  assert.ok(manifest.postingsApart)
  const part = objects.get(manifest.texts.key)
  objects.set(manifest.texts.key, { ...part, bytes: part.bytes.subarray(0, part.bytes.length >> 1) })
  // A new workspace attaches what the store holds and answers as the writer did.
  const attachesAsWritten = async () => {
    const again = make()
    await again.init()
    assert.deepEqual(await again.search('marker77x', { topK: 3 }), expected)
    await again.destroy()
  }
  return { objects, make, expected, attachesAsWritten }
}

test("a texts part holding a large index's postings cut short in the store, every document from files: the first search fails, typed, and the workspace builds its index again from the files in the background and saves a whole snapshot", async (t) => {
  const { objects, make, expected, attachesAsWritten } = await cutLargeTenant(t, 'tenant-f')
  const ws = make()
  await ws.init()
  await assert.rejects(ws.search('marker77x', { topK: 3 }), (e) => e instanceof SnapshotStoreError && /cannot be read/.test(e.message) && /building its index again from them/.test(e.message))
  let answered = null
  for (const started = Date.now(); !answered && Date.now() - started < 60_000; ) {
    answered = await ws.search('marker77x', { topK: 3 }).catch((e) => {
      assert.ok(e instanceof SnapshotStoreError, String(e))
      return new Promise((r) => setTimeout(() => r(null), 100))
    })
  }
  assert.deepEqual(answered, expected, 'answered from the index built again')
  // The repair then saves a whole snapshot: its texts part written over the cut one.
  const whole = () => {
    const manifest = JSON.parse(new TextDecoder().decode(objects.get('manifest.json').bytes))
    return objects.get(manifest.texts.key).bytes.length === manifest.texts.size
  }
  for (const started = Date.now(); !whole() && Date.now() - started < 30_000; ) await new Promise((r) => setTimeout(r, 50))
  assert.ok(whole(), 'the texts part in the store is whole again')
  await ws.destroy()
  await attachesAsWritten()
})

test("destroy() in the middle of the background rebuild from files settles, and nothing is written to the store after it", async (t) => {
  let ws = null
  let destroyed = null
  // Destroyed as the repair's build indexes (its first 'index' event).
  const onProgress = (e) => {
    if (ws && e.phase === 'index' && !destroyed) destroyed = ws.destroy().then(() => 'resolved', (err) => err)
  }
  const { objects, make } = await cutLargeTenant(t, 'tenant-h', { extra: { onProgress } })
  const attached = make()
  await attached.init()
  await assert.rejects(attached.search('marker77x', { topK: 3 }), (e) => e instanceof SnapshotStoreError && /building its index again from them/.test(e.message))
  ws = attached
  for (const started = Date.now(); !destroyed && Date.now() - started < 30_000; ) await new Promise((r) => setTimeout(r, 5))
  assert.ok(destroyed, 'the repair reached its build')
  const settled = await destroyed
  // (Its init() read again files changed within 2 s of their scan, a change it
  // cannot save while its postings are unreadable: then destroy() says so, typed.)
  assert.ok(settled === 'resolved' || settled instanceof SnapshotStoreError || settled?.code === 'WORKSPACE_NOT_READY', String(settled))
  const after = JSON.stringify([...objects].map(([k, o]) => [k, o.etag]))
  await new Promise((r) => setTimeout(r, 2000))
  assert.equal(JSON.stringify([...objects].map(([k, o]) => [k, o.etag])), after, 'nothing written after destroy()')
  await assert.rejects(attached.search('marker77x', { topK: 3 }))
})

test("a texts part holding a large index's postings cut short in the store, a document from index() in it: searches fail, typed, naming rebuildSearchIndex(), nothing is rebuilt behind the caller's back; rebuildSearchIndex() builds from the files and saves a whole snapshot", async (t) => {
  const { make, expected, attachesAsWritten } = await cutLargeTenant(t, 'tenant-g', { apiDoc: true })
  const ws = make()
  await ws.init()
  const unreadable = (e) => e instanceof SnapshotStoreError && /rebuildSearchIndex/.test(e.message) && !/building its index again/.test(e.message)
  await assert.rejects(ws.search('marker77x', { topK: 3 }), unreadable)
  await new Promise((r) => setTimeout(r, 300))
  await assert.rejects(ws.search('marker77x', { topK: 3 }), unreadable, 'still: no rebuild started')
  await ws.rebuildSearchIndex()
  assert.deepEqual(await ws.search('marker77x', { topK: 3 }), expected)
  assert.deepEqual(await ws.search('apinote', { topK: 3 }), [], 'documents from index() are not in a rebuild from files')
  assert.equal(await ws.save(), true)
  await ws.destroy()
  await attachesAsWritten()
})

test("a large index's postings fetched with the texts are cached in the snapshot's own order: the next attach maps the cached file and fetches the manifest only", async (t) => {
  const { objects, memory } = memoryStore()
  const { docs } = manyWords(9)
  const writer = storeWorkspace(memory)
  await writer.init()
  await writer.indexMany(docs)
  assert.equal(await writer.save(), true)
  const expected = await writer.search('marker42x', { topK: 3 })
  await writer.destroy()
  assert.ok(JSON.parse(new TextDecoder().decode(objects.get('manifest.json').bytes)).postingsApart)
  const cacheDir = tree(t)
  const gets = []
  const store = { ...memory, get: (key, range) => (gets.push(key), memory.get(key, range)) }
  const make = () => new Workspace({ id: 'tenant-c', bm25: true, persist: { store, cacheDir, storeTimeoutMs: 5000 } })
  const cold = make()
  await cold.init()
  // A write waits for the postings whole: the texts part is here, and cached.
  await cold.index('docs/extra.txt', 'one more')
  gets.length = 0
  const warm = make()
  await warm.init()
  assert.deepEqual(gets, ['manifest.json'], 'the snapshot came from the cache')
  assert.deepEqual(await warm.search('marker42x', { topK: 3 }), expected)
  await Promise.all([warm.destroy(), cold.destroy()])
})

test("a background save's slow upload does not hold up writes: its turn ends once the snapshot is taken", async () => {
  const { memory } = memoryStore()
  let hold = false
  let release = () => {}
  let putting = 0
  const slow = {
    ...memory,
    put: async (key, bytes, options) => {
      if (hold) {
        // The first put of the save waits until released; the others go.
        hold = false
        putting++
        await new Promise((r) => (release = r))
      }
      return memory.put(key, bytes, options)
    },
  }
  const ws = storeWorkspace(slow, { persist: { store: slow, storeTimeoutMs: 60_000 } })
  await ws.init()
  await ws.index('a.md', 'alpha')
  await ws.save()
  hold = true
  await ws.index('b.md', 'beta') // saved in the background a second later
  while (putting === 0) await new Promise((r) => setTimeout(r, 20))
  // The upload waits; a write goes on.
  const written = await Promise.race([ws.index('c.md', 'gamma').then(() => 'written'), new Promise((r) => setTimeout(() => r('held up'), 5_000))])
  assert.equal(written, 'written')
  release()
  await ws.destroy()
})

test('cacheDir: a damaged text in the cached copy fails the search that reads it and every later one, typed, never leaves the document out; the next attach fetches the parts', async (t) => {
  const cacheDir = tree(t)
  const { memory } = memoryStore()
  const store = { ...memory, cacheKey: 'memory://damaged-text' }
  const open = () => new Workspace({ id: 'dt', bm25: true, persist: { store, cacheDir } })
  const first = open()
  await first.init()
  await first.indexMany(Array.from({ length: 50 }, (_, i) => ({ path: `doc${i}`, content: `document number ${i} about word${i}` })))
  await first.save()
  await first.destroy()
  const file = path.join(cacheDir, fs.readdirSync(cacheDir).find((f) => f.endsWith('.wss')))
  const bytes = fs.readFileSync(file)
  const at = bytes.indexOf('about word23')
  assert.ok(at > 0, 'the texts are stored plain here')
  bytes[at] ^= 1
  fs.chmodSync(file, 0o644)
  fs.writeFileSync(file, bytes)
  const warm = open()
  await warm.init()
  const e = await warm.search('word23', { topK: 3 }).then(() => null, (err) => err)
  assert.ok(e instanceof SnapshotStoreError, String(e))
  assert.match(e.message, /damaged/)
  assert.ok(!fs.existsSync(file), 'the damaged copy is removed')
  // Later searches fail too: the document left out might be any search's (they answered without it).
  for (const q of ['word23', 'word7']) {
    const later = await warm.search(q, { topK: 3 }).then(() => null, (err) => err)
    assert.ok(later instanceof SnapshotStoreError, `${q}: ${later}`)
  }
  // A save needs every text: it fails typed too (the writes stay in memory).
  await warm.index('new', 'a new document')
  await assert.rejects(warm.save(), SnapshotStoreError)
  await warm.destroy().catch(() => {})
  const again = open()
  await again.init()
  assert.deepEqual(ids(await again.search('word23', { topK: 1 })), ['doc23'])
  await again.destroy()
})

test('a manifest write answered after storeTimeoutMs that lands after its read-back is taken as this workspace\'s own by the next save: no false conflict', async () => {
  const { memory } = memoryStore()
  let late = false
  const store = {
    ...memory,
    put: async (key, bytes, condition) => {
      if (late && key === 'manifest.json') {
        late = false
        // Lands after the timeout (1.5 s) and after the workspace read the manifest back.
        await new Promise((r) => setTimeout(r, 2500))
      }
      return memory.put(key, bytes, condition)
    },
  }
  const open = () => new Workspace({ id: 'late', bm25: true, persist: { store, storeTimeoutMs: 1500 } })
  const ws = open()
  await ws.init()
  await ws.index('a', 'alpha first')
  await ws.save()
  await ws.index('b', 'beta second')
  late = true
  const first = await ws.save().then(() => null, (e) => e)
  assert.ok(first instanceof SnapshotStoreError, String(first))
  await new Promise((r) => setTimeout(r, 2000)) // the late write lands
  // A second one lost the same way, read back after the first landed.
  await ws.index('b2', 'beta again')
  late = true
  await assert.rejects(ws.save(), SnapshotStoreError)
  await new Promise((r) => setTimeout(r, 2000))
  await ws.index('c', 'gamma third')
  assert.equal(await ws.save(), true)
  await ws.destroy()
  const again = open()
  await again.init()
  assert.deepEqual((await again.search('alpha beta gamma', { topK: 5 })).map((r) => r.id).sort(), ['a', 'b', 'b2', 'c'])
  await again.destroy()
  // Another writer's manifest in between is still a conflict.
  const one = open()
  const two = open()
  await Promise.all([one.init(), two.init()])
  await one.index('d', 'delta')
  await one.save()
  await two.index('e', 'epsilon')
  await assert.rejects(two.save(), SnapshotConflictError)
  await one.destroy()
  await two.destroy().catch(() => {})
})

test('after an init() the store failed, searches reject with its error rather than answer from an empty index; the next init() attaches', async () => {
  const { memory } = memoryStore()
  let down = false
  const store = { ...memory, get: async (key, range) => { if (down) throw new Error('store down'); return memory.get(key, range) } }
  const open = () => new Workspace({ id: 'down', bm25: true, persist: { store, storeTimeoutMs: 1000 } })
  const first = open()
  await first.init()
  await first.index('a', 'alpha router')
  await first.save()
  await first.destroy()
  down = true
  const ws = open()
  await assert.rejects(ws.init(), SnapshotStoreError)
  assert.equal(ws.status, 'error')
  for (const mode of ['bm25']) {
    const e = await ws.search('router', { mode }).then(() => null, (err) => err)
    assert.ok(e instanceof SnapshotStoreError, `${mode}: ${e}`)
    assert.match(e.message, /store down.*not attached/s)
  }
  down = false
  await ws.init()
  assert.deepEqual(ids(await ws.search('router')), ['a'])
  await ws.destroy()
})

test('writes made after an init() the store failed are not saved, and save() and destroy() say so with SnapshotStoreError (they resolved as if saved); an init() once the store answers saves them', async () => {
  const { memory, objects } = memoryStore()
  let down = true
  const store = { ...memory, get: async (key, range) => { if (down) throw new Error('store down'); return memory.get(key, range) } }
  const open = () => new Workspace({ id: 'unattached', bm25: true, persist: { store, storeTimeoutMs: 1000 } })
  const ws = open()
  await assert.rejects(ws.init(), SnapshotStoreError)
  await ws.index('notes/1', 'renewal call moved to friday')
  const saved = await ws.save().then(() => null, (err) => err)
  assert.ok(saved instanceof SnapshotStoreError, String(saved))
  assert.match(saved.message, /store down.*not saved.*not attached/s)
  assert.match(ws.stats().saveError, /not saved/)
  await assert.rejects(ws.destroy(), SnapshotStoreError)
  assert.equal(objects.size, 0, 'nothing written')
  // Made before an init() that attaches, once the store answers, the same write is saved.
  down = false
  const third = open()
  await third.index('notes/1', 'renewal call moved to friday')
  await third.init()
  assert.equal(await third.save(), true)
  await third.destroy()
  const reader = open()
  await reader.init()
  assert.deepEqual(ids(await reader.search('renewal')), ['notes/1'])
  await reader.destroy()
})

test('a part damaged once on its way (the stored object intact) is fetched again, not taken for a broken tenant: the index part (it attached empty, searches answered []) and the texts part (every search failed for good)', async () => {
  for (const which of ['index', 'texts']) {
    // A tenant of its own each time (parts already read in this process are not fetched again).
    const { objects, memory } = memoryStore()
    const writer = storeWorkspace(memory)
    await writer.init()
    await writer.indexMany([...DOCS, [`${which}.md`, `the ${which} part`]].map(([path, content]) => ({ path, content })))
    const expected = []
    for (const q of QUERIES) expected.push(ids(await writer.search(q, { topK: 3 })))
    await writer.destroy()
    const manifest = JSON.parse(Buffer.from(objects.get('manifest.json').bytes).toString())
    let damaged = 0
    const flaky = {
      get: async (key, range) => {
        const got = await memory.get(key, range)
        if (!got || key !== manifest[which].key || range || damaged > 0) return got
        damaged++
        const bytes = Uint8Array.from(got.bytes)
        bytes[bytes.length >> 1] ^= 0xff
        return { bytes, etag: got.etag }
      },
      put: memory.put,
    }
    const ws = storeWorkspace(flaky)
    const report = await ws.init()
    const answers = []
    for (const q of QUERIES) answers.push(ids(await ws.search(q, { topK: 3 })))
    assert.equal(damaged, 1, which)
    assert.deepEqual(report.warnings, [], which)
    assert.deepEqual(answers, expected, which)
    await ws.index('new.md', 'written after the attach')
    await ws.destroy()
  }
})

test("one damaged answer for manifest.json (a proxy's error page under 200, a cut body) is fetched again: the tenant attaches whole (it attached empty, every search [])", async () => {
  const { memory } = memoryStore()
  const writer = storeWorkspace(memory)
  await writer.init()
  await writer.indexMany(DOCS.map(([path, content]) => ({ path, content })))
  const expected = ids(await writer.search('router trie', { topK: 3 }))
  await writer.destroy()
  for (const damage of [() => new TextEncoder().encode('<html>502 Bad Gateway</html>'), (b) => b.subarray(0, b.length >> 1)]) {
    let damaged = 0
    const flaky = {
      get: async (key, range) => {
        const got = await memory.get(key, range)
        if (key !== 'manifest.json' || damaged++ > 0) return got
        return { bytes: damage(got.bytes), etag: got.etag }
      },
      put: memory.put,
    }
    const ws = storeWorkspace(flaky)
    const report = await ws.init()
    assert.equal(damaged, 2)
    assert.deepEqual(report.warnings, [])
    assert.deepEqual(ids(await ws.search('router trie', { topK: 3 })), expected)
    // It saves over the manifest it attached.
    await ws.index('new.md', 'written after the attach')
    await ws.save()
    await ws.destroy()
  }
})

test('version tags weakened on GET (W/"…", a compressing proxy) still save; tags rewritten otherwise are a SnapshotStoreError, never a conflict forever', async () => {
  for (const [rewrite, saves] of [[(etag) => `W/${etag}`, true], [(etag) => `${etag}-gzip`, false]]) {
    const { memory } = memoryStore()
    const proxied = {
      get: async (key, range) => {
        const got = await memory.get(key, range)
        return got && { bytes: got.bytes, etag: rewrite(got.etag) }
      },
      put: memory.put,
    }
    const first = storeWorkspace(proxied)
    await first.init()
    await first.index('a.md', 'router trie')
    await first.destroy()
    const ws = storeWorkspace(proxied)
    await ws.init()
    await ws.index('b.md', 'a second router')
    if (saves) {
      await ws.save()
      await ws.index('c.md', 'a third router')
      await ws.save()
    } else {
      for (let i = 0; i < 2; i++) {
        const e = await ws.save().then(() => null, (err) => err)
        assert.ok(e instanceof SnapshotStoreError && !(e instanceof SnapshotConflictError), String(e))
        assert.match(e.message, /refused to write manifest\.json over version .* still the one there, unchanged: its version tags on GET differ from those on PUT/)
      }
    }
    await ws.destroy().catch(() => {})
  }
})

test("a save deletes the parts of snapshots replaced retainMs ago or more, through the store's delete (every save left a whole snapshot behind, for ever)", async () => {
  const { store, deleted, parts, manifest } = deletingStore()
  const named = () => {
    const m = manifest()
    return { now: [m.index.key, m.texts.key].sort(), retired: (m.retired ?? []).map((r) => r.key) }
  }
  // retainMs 0: each save deletes the parts the one before it replaced.
  const ws = storeWorkspace(store, { persist: { store, storeTimeoutMs: 1500, retainMs: 0 } })
  await ws.init()
  for (let i = 0; i < 12; i++) {
    await ws.index(`doc${i}.md`, `note ${i} about routers`)
    await ws.save()
  }
  assert.deepEqual(parts(), named().now)
  assert.deepEqual(named().retired, [])
  assert.ok(deleted.length >= 11 && deleted.every((k) => /^parts\/[0-9a-f]{32}\.wss$/.test(k)), deleted.join())
  await ws.destroy()
  // The store still serves the latest snapshot whole.
  const again = storeWorkspace(store)
  await again.init()
  assert.equal((await again.search('routers', { topK: 20 })).length, 12)
  await again.destroy()

  // The default (a day) keeps what was replaced, listed in the manifest; a reader attached to an older
  // snapshot reads its texts late all the same.
  const { objects: kept, memory: keeping } = memoryStore()
  const store2 = { ...keeping, delete: async (key) => kept.delete(key) }
  const writer = storeWorkspace(store2)
  await writer.init()
  await writer.indexMany(DOCS.map(([path, content]) => ({ path, content })))
  await writer.save()
  const reader = storeWorkspace(store2)
  await reader.init()
  for (let i = 0; i < 3; i++) {
    await writer.index(`more${i}.md`, `more ${i}`)
    await writer.save()
  }
  const listed = JSON.parse(Buffer.from(kept.get('manifest.json').bytes).toString()).retired.map((r) => r.key)
  assert.equal(listed.length, 6)
  assert.ok(listed.every((k) => kept.has(k)))
  assert.deepEqual(ids(await reader.search('router trie', { topK: 1 })), ['notes/router.md'])
  await reader.destroy().catch(() => {})
  await writer.destroy()
})

test('a snapshot the store holds damaged, of a workspace that reads no files itself, starts empty and says so (its warning said "rebuilt from the files"); its saves are refused; repaired, it attaches whole', async () => {
  const { objects, memory } = memoryStore()
  const first = storeWorkspace(memory)
  await first.init()
  await first.indexMany(DOCS.map(([path, content]) => ({ path, content })))
  await first.save()
  await first.destroy()
  const manifest = JSON.parse(Buffer.from(objects.get('manifest.json').bytes).toString())
  const part = objects.get(manifest.index.key)
  // Damaged for good: every GET answers the same wrong bytes.
  objects.set(manifest.index.key, { ...part, bytes: part.bytes.map((b, i) => (i > 64 ? b ^ 0x5a : b)) })
  const ws = storeWorkspace(memory)
  const report = await ws.init()
  assert.equal(report.warnings.length, 1)
  assert.match(report.warnings[0], /checksum does not match.*reads no files itself \(autoIndexPaths\), so its index starts empty/)
  assert.doesNotMatch(report.warnings[0], /rebuilt from the files/)
  assert.equal(ws.stats().documents, 0)
  await ws.index('new.md', 'written after')
  await assert.rejects(ws.save(), (e) => e instanceof SnapshotStoreError && /if another workspace saved since, a new attach .* reads its snapshot; if not, remove the tenant's manifest\.json/.test(e.message))
  await ws.destroy().catch(() => {})
  // Repaired, it attaches whole.
  objects.set(manifest.index.key, part)
  const again = storeWorkspace(memory)
  await again.init()
  assert.deepEqual(ids(await again.search('router trie', { topK: 1 })), ['notes/router.md'])
  await again.destroy()
})

test('a save refused for a conflict deletes the parts it wrote (each conflict left two in the store for good)', async () => {
  const { store, deleted, parts, manifest } = deletingStore()
  const named = () => {
    const m = manifest()
    return [m.index.key, m.texts.key, ...(m.retired ?? []).map((r) => r.key)].sort()
  }
  const first = storeWorkspace(store)
  const second = storeWorkspace(store)
  await first.init()
  await second.init()
  await first.index('first.md', 'written by the first')
  await second.index('second.md', 'written by the second')
  assert.equal(await first.save(), true)
  await assert.rejects(second.save(), SnapshotConflictError)
  assert.equal(deleted.length, 2)
  assert.deepEqual(parts(), named())
  // The winner's snapshot is whole; the loser, attached again, saves.
  await first.destroy()
  await second.destroy().catch(() => {})
  const again = storeWorkspace(store)
  await again.init()
  assert.deepEqual(ids(await again.search('written', { topK: 5 })), ['first.md'])
  await again.index('second.md', 'written by the second')
  assert.equal(await again.save(), true)
  await again.destroy()
  const last = storeWorkspace(store)
  await last.init()
  assert.deepEqual(ids(await last.search('written', { topK: 5 })).sort(), ['first.md', 'second.md'])
  await last.destroy()
})

test('a save refused for a conflict, over a store that ignores If-None-Match on parts, never deletes a part the manifest there names', async () => {
  const { objects, memory } = memoryStore()
  const deleted = []
  // The manifest's conditions are honoured, the parts' not: the loser's put of a part the winner made answers "written".
  const lax = { ...memory, put: (key, bytes, cond = {}) => memory.put(key, bytes, key.startsWith('parts/') ? {} : cond), delete: async (key) => (deleted.push(key), objects.delete(key)) }
  const a = storeWorkspace(lax)
  const b = storeWorkspace(lax)
  await a.init()
  await b.init()
  // The same text (one texts part, one key), other metadata (two index parts).
  await a.index('a.md', 'the same text on both servers', { metadata: { by: 'a' } })
  await b.index('a.md', 'the same text on both servers', { metadata: { by: 'b' } })
  assert.equal(await a.save(), true)
  await assert.rejects(b.save(), SnapshotConflictError)
  const manifest = JSON.parse(Buffer.from(objects.get('manifest.json').bytes).toString())
  assert.ok(objects.has(manifest.texts.key) && objects.has(manifest.index.key), `deleted ${deleted.join()}`)
  assert.equal(deleted.length, 1, "the loser's own index part only")
  await a.destroy()
  await b.destroy().catch(() => {})
  const c = storeWorkspace(lax)
  await c.init()
  assert.deepEqual((await c.search('same text')).map((r) => [r.id, r.metadata?.by]), [['a.md', 'a']])
  await c.destroy()
})

test('an attach whose parts another save deleted after its manifest was read (retainMs 0) reads the new manifest, not an empty tenant', async () => {
  const { objects, memory } = memoryStore()
  const store = { ...memory, delete: async (key) => objects.delete(key) }
  const writer = (extra = {}) => storeWorkspace(store, { persist: { store, storeTimeoutMs: 1500, retainMs: 0 }, ...extra })
  const first = writer()
  await first.init()
  await first.indexMany(DOCS.map(([path, content]) => ({ path, content })))
  await first.save()
  await first.destroy()
  // The reader's first part GET waits until two saves elsewhere deleted the parts its manifest named.
  let held = null
  let release
  const gate = new Promise((resolve) => (release = resolve))
  const slow = { ...store, get: async (key, range) => {
    if (key.startsWith('parts/') && !held) {
      held = key
      await gate
    }
    return memory.get(key, range)
  } }
  const reader = storeWorkspace(slow)
  const attached = reader.init()
  await eventually('the reader holds its part GET', () => held !== null)
  for (const id of ['later-1.md', 'later-2.md']) {
    const w = writer()
    await w.init()
    await w.index(id, `${id} about routers`)
    await w.save()
    await w.destroy()
  }
  assert.ok(!objects.has(held), 'the part the reader waits for was deleted')
  release()
  const report = await attached
  assert.deepEqual(report.warnings, [])
  assert.equal(reader.stats().documents, DOCS.length + 2)
  assert.deepEqual(ids(await reader.search('router trie', { topK: 1 })), ['notes/router.md'])
  await reader.index('mine.md', 'written by the reader')
  assert.equal(await reader.save(), true)
  await reader.destroy()
})

test('a workspace attached to a large snapshot replaced and deleted since (retainMs) fails the searches that need its texts with SnapshotStoreError saying that attaching again reads the new one', async () => {
  const { objects, memory } = memoryStore()
  const store = { ...memory, delete: async (key) => objects.delete(key) }
  const make = () => new Workspace({ id: 'big', bm25: true, persist: { store, retainMs: 0 } })
  const writer = make()
  await writer.init()
  await writer.indexMany(manyWords(7).docs)
  await writer.save()
  // Its texts part is large: read by range as searches need them, never fetched whole here.
  const reader = make()
  await reader.init()
  for (let i = 0; i < 2; i++) {
    await writer.index(`x${i}.md`, 'x')
    await writer.save()
  }
  await assert.rejects(reader.search('marker77x', { topK: 1 }), (e) => e instanceof SnapshotStoreError && /which is not there \(a save deletes the parts of snapshots replaced persist\.retainMs before it: if one replaced this workspace's, attaching again reads the new one\)/.test(e.message))
  await reader.destroy().catch(() => {})
  await writer.destroy()
  const again = make()
  await again.init()
  assert.deepEqual(ids(await again.search('marker77x', { topK: 1 })), ['docs/77.txt'])
  await again.destroy()
})

test('retainMs: short, the parts go at the first save after it; a store without delete keeps them; a bad value is a RangeError', async () => {
  const { objects, memory } = memoryStore()
  const store = { ...memory, delete: async (key) => objects.delete(key) }
  const ws = storeWorkspace(store, { persist: { store, retainMs: 300 } })
  await ws.init()
  await ws.index('a.md', 'one')
  await ws.save()
  await ws.index('b.md', 'two')
  await ws.save()
  const count = () => [...objects.keys()].filter((k) => k.startsWith('parts/')).length
  assert.equal(count(), 4, 'the first snapshot is kept for now')
  await new Promise((r) => setTimeout(r, 400))
  await ws.index('c.md', 'three')
  await ws.save()
  assert.equal(count(), 4, "the first's two parts deleted, the second's kept (replaced just now)")
  await ws.destroy()
  const { objects: all, memory: noDelete } = memoryStore()
  const plain = storeWorkspace(noDelete, { persist: { store: noDelete, retainMs: 0 } })
  await plain.init()
  for (const name of ['a', 'b', 'c']) {
    await plain.index(`${name}.md`, name)
    await plain.save()
  }
  assert.equal([...all.keys()].filter((k) => k.startsWith('parts/')).length, 6)
  await plain.destroy()
  for (const bad of [-1, 1.5, NaN, Infinity, '10']) assert.throws(() => storeWorkspace(store, { persist: { store, retainMs: bad } }), bad === '10' ? TypeError : RangeError)
  storeWorkspace(store, { persist: { store, retainMs: Number.MAX_SAFE_INTEGER } })
})

test('a save that does not land (its manifest write fails, or loses to another writer) deletes nothing: every part the manifest there names stays (retainMs 0 deleted them before the write)', async () => {
  const { objects, memory } = memoryStore()
  let failManifest = false
  const store = {
    get: memory.get,
    put: async (key, bytes, conditions) => {
      if (failManifest && key === 'manifest.json') throw new Error('503 Slow Down')
      return memory.put(key, bytes, conditions)
    },
    delete: async (key) => objects.delete(key),
  }
  const named = () => {
    const m = JSON.parse(Buffer.from(objects.get('manifest.json').bytes).toString())
    return [m.index.key, m.texts.key]
  }
  const make = () => storeWorkspace(store, { persist: { store, storeTimeoutMs: 1500, retainMs: 0 } })
  const ws = make()
  await ws.init()
  await ws.index('a.md', 'one router')
  await ws.save()
  failManifest = true
  await ws.index('b.md', 'two routers')
  await assert.rejects(ws.save(), SnapshotStoreError)
  assert.ok(named().every((k) => objects.has(k)), 'the parts of the manifest there are all there')
  failManifest = false
  // Another writer saves first: this one's save is refused, and deletes nothing either.
  const other = make()
  await other.init()
  await other.index('c.md', 'three routers')
  await other.save()
  await ws.index('d.md', 'four routers')
  await assert.rejects(ws.save(), SnapshotConflictError)
  assert.ok(named().every((k) => objects.has(k)))
  await other.destroy()
  await ws.destroy().catch(() => {})
  const again = make()
  await again.init()
  assert.equal((await again.search('router', { topK: 10 })).length, 2)
  await again.destroy()
})

test('a background save that failed while the store was down is tried again once it is back (it waited for the next write, save() or destroy(): a kill lost it)', async (t) => {
  const { objects, memory } = memoryStore()
  let down = false
  let puts = 0
  const flaky = { ...memory, put: async (...a) => { puts++; if (down) throw new Error('the store is down for this test'); return memory.put(...a) } }
  const ws = storeWorkspace(flaky, { id: 'tenant-retry' })
  t.after(() => ws.destroy())
  await ws.init()
  await ws.index('a.md', 'alpha heron')
  assert.equal(await ws.save(), true)
  down = true
  await ws.index('b.md', 'okapi wanders')
  await eventually('the background save failed', () => /store is down/.test(ws.stats().saveError ?? ''))
  const failedPuts = puts
  down = false
  await eventually('tried again, and saved', () => ws.stats().saveError == null, 20_000)
  assert.ok(puts > failedPuts)
  const reader = storeWorkspace(memory, { id: 'tenant-retry' })
  await reader.init()
  assert.deepEqual(ids(await reader.search('okapi', { topK: 3 })), ['b.md'])
  await reader.destroy()
  // Nothing left unsaved: no more tries (the next would come 20 s after the last).
  const settled = puts
  await new Promise((r) => setTimeout(r, 11_000))
  assert.equal(puts, settled)
  assert.equal(ws.stats().saveError, undefined)
  assert.ok(objects.has('manifest.json'))
})

test("a save whose part is one a save before retired (the same documents again) never names it while its deletion may be on its way: it is written under a key of its own (the part was deleted under the new manifest, and the tenant's documents lost)", async () => {
  const { objects, memory } = memoryStore()
  // Writer A's deletions wait until released: a slow store, or a process paused.
  let release
  const held = new Promise((resolve) => (release = resolve))
  const slow = { ...memory, delete: async (key) => (await held, objects.delete(key)) }
  const fast = { ...memory, delete: async (key) => objects.delete(key) }
  const manifest = () => JSON.parse(Buffer.from(objects.get('manifest.json').bytes).toString())
  const writer = (store) => storeWorkspace(store, { id: 'tenant-race', persist: { store, storeTimeoutMs: 5000, retainMs: 0 } })
  const a = writer(slow)
  await a.init()
  await a.index('x.md', 'the x document about routers')
  await a.save()
  const first = manifest().texts.key
  await a.index('y.md', 'the y document about caches')
  const saving = a.save() // lands, then deletes the first snapshot's parts (held)
  while (manifest().texts.key === first) await new Promise((r) => setTimeout(r, 5))
  // B attaches that snapshot and goes back to the first one's documents: the same texts.
  const b = writer(fast)
  await b.init()
  await b.unindex('y.md')
  assert.equal(await b.save(), true)
  assert.notEqual(manifest().texts.key, first, 'the retired part is not named again')
  release()
  await saving
  await b.destroy()
  await a.destroy().catch(() => {})
  const named = manifest()
  for (const key of [named.index.key, named.texts.key]) assert.ok(objects.has(key), `${key} is there`)
  const reader = writer(fast)
  await reader.init()
  assert.deepEqual(ids(await reader.search('routers', { topK: 5 })), ['x.md'])
  assert.deepEqual(ids(await reader.search('caches', { topK: 5 })), [])
  await reader.index('w.md', 'a new document')
  assert.equal(await reader.save(), true)
  await reader.destroy()
})

test('saves tried again while the manifest cannot be written leave no part behind at each try (a part of its own not named yet is named again)', async (t) => {
  const { objects, memory } = memoryStore()
  let manifestDown = false
  const store = { ...memory, put: async (key, ...rest) => { if (manifestDown && key === 'manifest.json') throw new Error('manifest writes fail for this test'); return memory.put(key, ...rest) } }
  const ws = storeWorkspace(store, { id: 'tenant-orphans' })
  t.after(() => ws.destroy())
  await ws.init()
  await ws.index('a.md', 'alpha heron')
  assert.equal(await ws.save(), true)
  await ws.index('b.md', 'okapi wanders')
  manifestDown = true
  for (let i = 0; i < 3; i++) await assert.rejects(ws.save(), /manifest writes fail/)
  manifestDown = false
  assert.equal(await ws.save(), true)
  const m = JSON.parse(Buffer.from(objects.get('manifest.json').bytes).toString())
  const listed = new Set([m.index.key, m.texts.key, ...(m.retired ?? []).map((r) => r.key)])
  const orphans = [...objects.keys()].filter((k) => k.startsWith('parts/') && !listed.has(k))
  assert.deepEqual(orphans, [])
})

test('a part written under a key of its own is named again by the saves after it that hold the same content (each save made another copy, for a day)', async (t) => {
  const { objects, memory } = memoryStore()
  const store = { ...memory, delete: async (key) => objects.delete(key) }
  const ws = storeWorkspace(store, { id: 'tenant-fresh' })
  t.after(() => ws.destroy())
  const manifest = () => JSON.parse(Buffer.from(objects.get('manifest.json').bytes).toString())
  await ws.init()
  await ws.index('x.md', 'the x document about routers', { metadata: { v: 1 } })
  await ws.save()
  const first = manifest().texts.key
  await ws.index('y.md', 'the y document about caches')
  await ws.save()
  await ws.unindex('y.md')
  await ws.save() // the first texts again: that part is retired, so written under a key of its own
  const fresh = manifest().texts
  assert.notEqual(fresh.key, first)
  assert.ok(fresh.nonce)
  for (let v = 2; v < 5; v++) {
    await ws.index('x.md', 'the x document about routers', { metadata: { v } }) // the index part changes, the texts do not
    assert.equal(await ws.save(), true)
    assert.equal(manifest().texts.key, fresh.key, `save ${v}`)
  }
  const parts = [...objects.keys()].filter((k) => k.startsWith('parts/'))
  const m = manifest()
  const listed = new Set([m.index.key, m.texts.key, ...(m.retired ?? []).map((r) => r.key)])
  assert.deepEqual(parts.filter((k) => !listed.has(k)), [])
  assert.equal(parts.filter((k) => k !== fresh.key && !listed.has(k)).length, 0)
  const reader = storeWorkspace(memory, { id: 'tenant-fresh' })
  await reader.init()
  assert.deepEqual(ids(await reader.search('routers', { topK: 3 })), ['x.md'])
  await reader.destroy()
})
