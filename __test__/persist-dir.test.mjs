// The persist directory is ours alone: links are never followed, a user's
// files are never written or truncated, a FIFO or a device in place of the
// snapshot is refused without blocking, and a directory that holds the
// indexed folder is refused with a clear error. Also: pathPrefix filters
// inside the engine (a folder whose hits rank low is still found).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync, spawnSync } from 'node:child_process'
import { tree, Workspace, LocalFilesystem } from './helpers.mjs'

const persisted = (base, dir) =>
  new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['docs'], persist: { dir } })

/** Resolves with `promise`, or fails after `ms` (a hang is a failure, not a stuck suite). */
const within = (promise, ms, what) =>
  Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms).unref())])

test('a link named lock, or a user file named lock, is never followed, truncated or written', async (t) => {
  const base = tree(t, { 'docs/a.md': 'alpha' })
  const root = tree(t, { 'victim.txt': 'precious', 'theirs/lock': 'my notes', 'mixed/notes.md': 'mine' })
  fs.mkdirSync(path.join(root, 'linked'))
  fs.symlinkSync(path.join(root, 'victim.txt'), path.join(root, 'linked/lock'))
  for (const dir of ['linked', 'theirs', 'mixed']) {
    const ws = persisted(base, path.join(root, dir))
    const report = await ws.init()
    assert.match(report.warnings.join('\n'), /cannot be used.*nothing is saved/, dir)
    assert.equal((await ws.search('alpha')).length, 1, 'indexing still works')
    await ws.destroy()
  }
  assert.equal(fs.readFileSync(path.join(root, 'victim.txt'), 'utf8'), 'precious')
  assert.equal(fs.readFileSync(path.join(root, 'theirs/lock'), 'utf8'), 'my notes')
  assert.deepEqual(fs.readdirSync(path.join(root, 'mixed')), ['notes.md'])
})

test('a hard link named lock (another name of a user\'s empty file) is never written', { skip: process.platform === 'win32' }, async (t) => {
  const base = tree(t, { 'docs/a.md': 'alpha' })
  const root = tree(t, { 'victim.txt': '' })
  fs.mkdirSync(path.join(root, 'snap'))
  fs.linkSync(path.join(root, 'victim.txt'), path.join(root, 'snap/lock'))
  const ws = persisted(base, path.join(root, 'snap'))
  const report = await ws.init()
  assert.match(report.warnings.join('\n'), /hard link.*nothing is saved/s)
  assert.equal((await ws.search('alpha')).length, 1, 'indexing still works')
  await ws.destroy()
  assert.equal(fs.readFileSync(path.join(root, 'victim.txt'), 'utf8'), '')
  assert.deepEqual(fs.readdirSync(path.join(root, 'snap')), ['lock'])
})

test('persist.dir equal to basePath or above it is refused with a clear error', (t) => {
  const base = tree(t, { 'docs/a.md': 'alpha' })
  for (const dir of [base, path.dirname(base), `${base}/.`]) {
    assert.throws(() => persisted(base, dir), { name: 'WorkspaceError', message: /persist.dir .* is basePath or a folder that holds it/ }, dir)
  }
  assert.doesNotThrow(() => persisted(base, path.join(base, '.cache/ws')))
})

test('a FIFO or a link to a device named snapshot.wss is refused at once (no hang, no unbounded read)', { skip: process.platform === 'win32' }, async (t) => {
  const base = tree(t, { 'docs/a.md': 'alpha' })
  const root = tree(t)
  fs.mkdirSync(path.join(root, 'fifo'))
  execFileSync('mkfifo', [path.join(root, 'fifo/snapshot.wss')])
  fs.mkdirSync(path.join(root, 'dev'))
  fs.symlinkSync('/dev/urandom', path.join(root, 'dev/snapshot.wss'))
  for (const dir of ['fifo', 'dev']) {
    const ws = persisted(base, path.join(root, dir))
    const report = await within(ws.init(), 5000, dir)
    assert.match(report.warnings.join('\n'), /not a regular file|symbolic link/, dir)
    assert.equal((await ws.search('alpha')).length, 1)
    await ws.destroy()
  }
})

test('a snapshot the system refuses to read (permission denied) rejects init() and is never saved over; documents given to index() survive', { skip: process.platform === 'win32' || !process.getuid }, (t) => {
  // root reads any file: the workspace runs as nobody then.
  const as = process.getuid() === 0 ? { uid: 65534, gid: 65534 } : {}
  if (spawnSync(process.execPath, ['-e', '0'], as).status !== 0) return t.skip(`${process.execPath} cannot run as uid 65534`)
  const root = tree(t)
  fs.chmodSync(root, 0o755)
  const dir = path.join(root, 'idx')
  fs.mkdirSync(dir)
  if (as.uid !== undefined) fs.chownSync(dir, as.uid, as.gid)
  const run = (body) => {
    const code = `const { Workspace } = require(${JSON.stringify(new URL('../index.js', import.meta.url).pathname)});
      (async () => {
        const ws = new Workspace({ id: 'notes', bm25: true, persist: { dir: ${JSON.stringify(dir)} } })
        let error = null
        try { await ws.init() } catch (e) { error = e.message }
        ${body}
        const documents = ws.stats().documents
        await ws.destroy()
        console.log(JSON.stringify({ error, documents }))
      })()`
    const out = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', ...as })
    assert.equal(out.status, 0, out.stderr)
    return JSON.parse(out.stdout)
  }
  assert.deepEqual(run("await ws.indexMany(Array.from({ length: 20 }, (_, i) => ({ path: 'crm/' + i, content: 'note ' + i })))"), { error: null, documents: 20 })
  const snapshot = path.join(dir, 'snapshot.wss')
  const before = fs.readFileSync(snapshot)
  fs.chmodSync(snapshot, 0o000)
  let refused
  try {
    refused = run("await ws.index('crm/new', 'one more')")
  } finally {
    fs.chmodSync(snapshot, 0o444)
  }
  assert.match(refused.error, /^persist: the snapshot in .* could not be read \(Permission denied.*nothing is saved over it/)
  assert.deepEqual(fs.readFileSync(snapshot), before, 'the snapshot is as it was')
  assert.deepEqual(run(''), { error: null, documents: 20 })
  // The directory itself unreadable, then readable again: the next init() of the same
  // workspace takes the writer's lock too, and saves (it saved nothing, without a word).
  const code = `const fs = require('node:fs'); const { Workspace } = require(${JSON.stringify(new URL('../index.js', import.meta.url).pathname)});
    (async () => {
      const ws = new Workspace({ id: 'notes', bm25: true, persist: { dir: ${JSON.stringify(dir)} } })
      fs.chmodSync(${JSON.stringify(dir)}, 0o000)
      let first = null
      try { await ws.init() } catch (e) { first = e.message } finally { fs.chmodSync(${JSON.stringify(dir)}, 0o755) }
      const report = await ws.init()
      await ws.index('crm/new', 'one more')
      const saved = await ws.save()
      await ws.destroy()
      console.log(JSON.stringify({ first, warnings: report.warnings, saved }))
    })()`
  const out = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', ...as })
  assert.equal(out.status, 0, out.stderr)
  const retried = JSON.parse(out.stdout)
  assert.match(retried.first, /could not be read \(Permission denied/)
  assert.deepEqual([retried.warnings, retried.saved], [[], true])
  assert.deepEqual(run(''), { error: null, documents: 21 })
})

test('pathPrefix filters inside the engine: a folder whose hits rank far down is found; a leading / is accepted', async (t) => {
  const files = {}
  for (let i = 0; i < 1500; i++) files[`top/t${i}.md`] = 'apple apple apple banana'
  for (let i = 0; i < 3; i++) files[`deep/d${i}.md`] = `apple ${'filler words here '.repeat(40)}`
  const base = tree(t, files)
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['top', 'deep'] })
  t.after(() => ws.destroy())
  await ws.init()
  for (const pathPrefix of ['deep/', '/deep/', './deep']) {
    const ids = (await ws.search('apple', { topK: 5, pathPrefix })).map((r) => r.id).sort()
    assert.deepEqual(ids, ['deep/d0.md', 'deep/d1.md', 'deep/d2.md'], pathPrefix)
  }
  assert.deepEqual(await ws.search('apple', { pathPrefix: 'nowhere/' }), [])
  await assert.rejects(ws.search('apple', { pathPrefix: 7 }), { name: 'TypeError' })
})

test('a writer whose persist directory was removed, and made again by another workspace that took its lock, saves no more (it wrote over the other\'s snapshot): saveError says why', async (t) => {
  const base = tree(t, { 'docs/a.md': 'alpha' })
  const dir = path.join(tree(t), 'p')
  const first = persisted(base, dir)
  t.after(() => first.destroy())
  await first.init()
  fs.rmSync(dir, { recursive: true })
  const second = persisted(base, dir)
  t.after(() => second.destroy())
  assert.deepEqual((await second.init()).warnings, [], 'the second is the writer')
  await second.index('notes/kiwi', 'kiwi note only the second has')
  assert.equal(await second.save(), true)
  await first.index('notes/other', 'written by the first')
  await assert.rejects(first.save(), { name: 'SnapshotStoreError', code: 'SNAPSHOT_STORE', message: /the directory, or its lock file, was removed or replaced since this workspace took its lock/ })
  assert.match(first.stats().saveError, /saves no more/)
  await second.destroy()
  await assert.rejects(first.destroy(), /saves no more/, 'its last save fails as saves do')
  const after = persisted(base, dir)
  t.after(() => after.destroy())
  await after.init()
  assert.deepEqual((await after.search('kiwi')).map((r) => r.id), ['notes/kiwi'])
  assert.deepEqual(await after.search('written'), [])
})

test('the temporary files of a grep index save a killed writer left are removed by the next writer (they piled up)', async (t) => {
  const base = tree(t, { 'docs/a.md': 'alpha' })
  const dir = path.join(tree(t), 'p')
  const first = persisted(base, dir)
  await first.init()
  await first.destroy()
  fs.writeFileSync(path.join(dir, 'grep.wss.tmp-30000-2'), 'half written')
  fs.writeFileSync(path.join(dir, 'snapshot.wss.tmp-30000-1'), 'half written')
  const next = persisted(base, dir)
  t.after(() => next.destroy())
  await next.init()
  assert.deepEqual(fs.readdirSync(dir).filter((n) => n.includes('.tmp-')), [])
})

test('a relative persist.dir and basePath are where they were when the workspace was made: a chdir() of the process later does not move its saves or reads (they went to the new directory)', async (t) => {
  const root = tree(t, { 'base/docs/a.md': 'alpha' })
  fs.mkdirSync(path.join(root, 'elsewhere/p'), { recursive: true })
  const script = `
    const { Workspace, LocalFilesystem } = require(${JSON.stringify(new URL('../index.js', import.meta.url).pathname)})
    process.chdir(${JSON.stringify(root)})
    const ws = new Workspace({ filesystem: { basePath: 'base' }, bm25: true, autoIndexPaths: ['docs'], persist: { dir: 'p' } })
    ws.init().then(async () => {
      process.chdir('elsewhere')
      await ws.index('notes/n', 'written after the chdir')
      await ws.save()
      if ((await ws.rebuildSearchIndex()).indexed !== 1) throw new Error('the files are read where basePath was')
      await ws.destroy()
    }).catch((e) => { console.error(e); process.exit(1) })`
  execFileSync(process.execPath, ['-e', script], { stdio: 'pipe' })
  assert.ok(fs.existsSync(path.join(root, 'p/snapshot.wss')))
  assert.deepEqual(fs.readdirSync(path.join(root, 'elsewhere/p')), [], 'nothing written where the chdir led')
  const again = persisted(path.join(root, 'base'), path.join(root, 'p'))
  t.after(() => again.destroy())
  await again.init()
  assert.deepEqual((await again.search('chdir')).map((r) => r.id), ['notes/n'])
})

// One start of a persisted workspace with an HNSW graph in the embedded store, in a process of its own
// (a crash is seen as the child's signal): prints its init() warnings and a search's ids.
const GRAPH_CHILD = `
const { Workspace, LocalFilesystem, LocalVector } = require(${JSON.stringify(new URL('../index.js', import.meta.url).pathname)})
const [base, dir, save] = process.argv.slice(1)
const embed = (t) => { const v = new Array(8).fill(0.01); for (const w of t.split(/\\W+/)) if (w) v[w.length % 8] += 1; return v }
;(async () => {
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['.'], persist: { dir },
    embedder: Object.assign(async (ts) => ts.map(embed), { batch: true }), embedderId: 'lengths', vectorStore: new LocalVector({ index: 'hnsw' }) })
  const report = await ws.init()
  for (let i = 0; i < 200 && ws.stats().vectorGraph?.state !== 'ready'; i++) await new Promise((r) => setTimeout(r, 25))
  const hits = await ws.search('alpha words', { mode: 'vector', topK: 3 })
  if (save === 'save') await ws.save()
  const graph = ws.stats().vectorGraph?.state
  await ws.destroy()
  console.log(JSON.stringify({ warnings: report.warnings, graph, ids: hits.map((h) => h.id) }))
})()
`

test('a damaged byte in a saved HNSW graph is caught by the checksum before usearch reads it: the next start rebuilds (it crashed the process, at every start)', { skip: process.platform === 'win32' }, (t) => {
  const files = {}
  for (let i = 0; i < 40; i++) files[`f${i}.md`] = `alpha words ${'x'.repeat(i)} number ${i}`
  const base = tree(t, files)
  const dir = path.join(tree(t), 'snap')
  const start = (save = '') => spawnSync(process.execPath, ['-e', GRAPH_CHILD, base, dir, save], { encoding: 'utf8', timeout: 60_000 })
  const first = start('save')
  assert.equal(first.status, 0, first.stderr)
  assert.equal(JSON.parse(first.stdout).graph, 'ready')
  const expected = JSON.parse(first.stdout).ids
  const file = path.join(dir, 'snapshot.wss')
  const pristine = fs.readFileSync(file)
  const graphAt = pristine.indexOf(Buffer.from('usearch'))
  assert.ok(graphAt > 0, 'the snapshot holds a graph')
  // Bytes of the graph's levels and neighbour lists a hunt found to crash usearch's restore.
  for (const [delta, x] of [[131, 242], [137, 186], [109, 252], [219, 149]]) {
    const damaged = Buffer.from(pristine)
    damaged[graphAt + delta] ^= x
    fs.rmSync(file)
    fs.writeFileSync(file, damaged)
    const again = start()
    assert.equal(again.signal, null, `byte ${delta}: killed by ${again.signal}`)
    assert.equal(again.status, 0, again.stderr)
    const out = JSON.parse(again.stdout)
    assert.match(out.warnings.join('\n'), /checksum/, `byte ${delta}`)
    assert.deepEqual(out.ids, expected, `byte ${delta}: the same answer, from the files`)
  }
})
