// persist: the index saved by one real process and loaded by the next, with
// files changed, added and deleted in between; damaged snapshots; a process
// killed (SIGKILL) while saving; two processes on one directory; and the
// embedder never called again for unchanged texts, with the embedded store,
// a LibSQL file and PostgreSQL + pgvector.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { hashEmbed, makeStore, pgAvailable, PG_URL } from './vector-helpers.mjs'
import { eventually, Workspace, LocalFilesystem, lib, tree } from './helpers.mjs'

const CHILD = fileURLToPath(new URL('./persist-child.mjs', import.meta.url))
const CANARY = 'workspace-search embedder check: the quick brown fox jumps over the lazy dog'
const QUERIES = ['alpha topic', 'gamma searching', 'chapter forty', 'renamed subject']

/** Runs one job in a new node process; resolves its JSON line. */
function run(job) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CHILD, JSON.stringify(job)], { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`child failed: ${err.message}\n${stderr}`))
      resolve(JSON.parse(stdout.trim().split('\n')[0]))
    })
  })
}

const HOUR_AGO = new Date(Date.now() - 3600_000)

/** Writes files with a modification time an hour ago (older than any scan). */
function put(base, rel, content, when = HOUR_AGO) {
  const p = path.join(base, rel)
  fs.mkdirSync(path.dirname(p), { recursive: true })
  fs.writeFileSync(p, content)
  fs.utimesSync(p, when, when)
}

/** A workspace folder of 40 small files and one large (chunked) one, and a persist dir. */
function corpus(t) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wss-persist-')))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const base = path.join(root, 'ws')
  const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon']
  for (let i = 0; i < 40; i++) {
    put(base, `docs/note-${i}.md`, `# Note ${i}\n${words[i % 5]} topic number ${i}\nsearching files ${'word'.repeat(i % 3)}\n`)
  }
  const chapters = Array.from({ length: 600 }, (_, i) => `chapter ${['ten', 'twenty', 'forty'][i % 3]} line ${i} of the long book`)
  put(base, 'docs/book.md', chapters.join('\n') + '\n')
  return { root, base, dir: path.join(root, 'snap') }
}

/** A workspace over `base/docs` persisted in `dir`, in this process. */
function persisted(base, dir) {
  return new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['docs'], persist: { dir } })
}

const sorted = (results) => Object.fromEntries(Object.entries(results).map(([q, r]) => [q, [...r].sort()]))

test('an embedder whose vectors changed size under the same embedderId: searches and writes say so and how to mend it (they said only the sizes)', async (t) => {
  const base = tree(t, { 'docs/a.md': 'the quokka lives here\n' })
  const dir = path.join(tree(t), 'idx')
  const open = (dim) => new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['docs'], embedder: async (text) => hashEmbed(text, dim), embedderId: 'mine', persist: { dir } })
  let ws = open(16)
  await ws.init()
  await ws.destroy()
  ws = open(24)
  await ws.init()
  const mend = /has dimension 16, got a vector of dimension 24: .*the embedder changed \(with persist and embedderId, give it a new embedderId, or none/
  await assert.rejects(ws.search('quokka', { mode: 'vector' }), { name: 'EmbedderError', code: 'EMBEDDER', message: mend })
  await assert.rejects(ws.index('notes/x', 'a quokka note'), { name: 'EmbedderError', code: 'EMBEDDER', message: mend })
  assert.equal((await ws.search('quokka', { mode: 'bm25' }))[0].id, 'docs/a.md')
  await ws.destroy()
})

test('a file dated ahead of the clock is read again at each start and found unchanged, and the snapshot is not written again for it', async (t) => {
  const { base, dir } = corpus(t)
  const ahead = new Date(Date.now() + 30 * 86400_000)
  put(base, 'docs/note-0.md', '# Note 0\nquokka\n', ahead)
  const snapshot = path.join(dir, 'snapshot.wss')
  const stampOf = () => fs.statSync(snapshot, { bigint: true }).mtimeNs
  const ids = (out, q) => out.results[q].map((r) => r.split(' ')[0])
  const first = await run({ base, dir, queries: ['quokka'] })
  assert.equal(first.report.reread, 41)
  const written = stampOf()
  for (const start of [2, 3]) {
    const again = await run({ base, dir, queries: ['quokka'] })
    assert.deepEqual([again.report.reused, again.report.reread], [40, 1], `start ${start}`)
    assert.deepEqual(ids(again, 'quokka'), ['docs/note-0.md'], `start ${start}`)
    assert.equal(stampOf(), written, `start ${start}: nothing to save`)
  }
  // Changed, it is indexed again (same size, same time: the status-change time tells).
  put(base, 'docs/note-0.md', '# Note 0\nwombat\n', ahead)
  const changed = await run({ base, dir, queries: ['quokka', 'wombat'] })
  assert.deepEqual([ids(changed, 'wombat'), ids(changed, 'quokka')], [['docs/note-0.md'], []])
  assert.notEqual(stampOf(), written)
})

test('a second process reuses the saved index: nothing read again, the same results', async (t) => {
  const { base, dir } = corpus(t)
  const first = await run({ base, dir, queries: QUERIES })
  assert.equal(first.report.reread, 41)
  assert.equal(first.report.reused, 0)
  assert.deepEqual(first.report.warnings, [])
  assert.ok(fs.statSync(path.join(dir, 'snapshot.wss')).size > 1000)
  const second = await run({ base, dir, queries: QUERIES })
  assert.equal(second.report.reused, 41)
  assert.equal(second.report.reread, 0)
  assert.equal(second.report.indexed, 41)
  assert.equal(second.report.chunks, first.report.chunks)
  assert.ok(first.report.chunks > 1, 'the book is chunked')
  assert.deepEqual(second.results, first.results)
  assert.deepEqual(second.stats.documents, first.stats.documents)
  // The same index, counted alike: the warm one's terms as they lie in
  // the snapshot (decoded only as queries read them), where each carries
  // a 20-byte entry that a term of one posting held in memory does without
  // (+12% on this small index, +0.2% at 50,000 files).
  assert.ok(second.stats.memoryBytes <= first.stats.memoryBytes * 1.2, `${second.stats.memoryBytes} <= 1.2 × ${first.stats.memoryBytes}`)
  assert.ok(second.stats.memoryBytes >= first.stats.memoryBytes * 0.5, `${second.stats.memoryBytes} >= 0.5 × ${first.stats.memoryBytes}`)
})

test('a directory built for one basePath works for a copy of the project elsewhere (build ahead, attach later)', async (t) => {
  const { base, dir, root } = corpus(t)
  const built = await run({ base, dir, queries: QUERIES })
  const elsewhere = path.join(root, 'tenant', 'project')
  // cp -a keeps modification times to the nanosecond (fs.cpSync rounds them through a float).
  fs.mkdirSync(path.dirname(elsewhere), { recursive: true })
  execFileSync('cp', ['-a', base, elsewhere])
  const copied = path.join(root, 'tenant', 'index')
  fs.cpSync(dir, copied, { recursive: true })
  const attached = await run({ base: elsewhere, dir: copied, queries: QUERIES })
  // A copy has other inodes and status-change times: each file is read once
  // and compared by hash (nothing is indexed or embedded again), then reused.
  assert.deepEqual([attached.report.reused, attached.report.reread, attached.report.removed, attached.report.warnings], [0, 41, 0, []])
  assert.deepEqual(attached.results, built.results)
  const again = await run({ base: elsewhere, dir: copied, queries: QUERIES })
  assert.deepEqual([again.report.reused, again.report.reread], [41, 0])
})

test('files changed, touched, added and deleted between processes: only they are read, results as a fresh build', async (t) => {
  const { base, dir, root } = corpus(t)
  await run({ base, dir, queries: QUERIES })
  const later = new Date(HOUR_AGO.getTime() + 60_000)
  put(base, 'docs/note-1.md', '# Note 1\nrenamed subject entirely\n', later)
  put(base, 'docs/note-2.md', fs.readFileSync(path.join(base, 'docs/note-2.md')), later) // touched, same content
  fs.rmSync(path.join(base, 'docs/note-3.md'))
  put(base, 'docs/added.md', 'a renamed subject appears in a new note\n', later)
  const warm = await run({ base, dir, queries: QUERIES })
  assert.equal(warm.report.reread, 3)
  assert.equal(warm.report.reused, 38)
  assert.equal(warm.report.removed, 1)
  assert.equal(warm.report.indexed, 41)
  const fresh = await run({ base, dir: path.join(root, 'fresh'), queries: QUERIES })
  assert.equal(fresh.report.reread, 41)
  assert.deepEqual(sorted(warm.results), sorted(fresh.results))
  assert.ok(warm.results['renamed subject'].some((r) => r.startsWith('docs/added.md')))
  assert.ok(!JSON.stringify(warm.results).includes('note-3.md'))
  assert.equal(warm.stats.documents, fresh.stats.documents)
  assert.equal(warm.stats.tokens, fresh.stats.tokens)
  // The next start reuses everything again (the changes were saved).
  const again = await run({ base, dir, queries: QUERIES })
  assert.equal(again.report.reread, 0)
  assert.deepEqual(again.results, warm.results)
})

test('an init() that updated a few files resolves before saving; a process that ends at once reads them again next time', async (t) => {
  const { base, dir } = corpus(t)
  await run({ base, dir, queries: QUERIES })
  const file = path.join(dir, 'snapshot.wss')
  const built = fs.statSync(file).mtimeMs
  const later = new Date(HOUR_AGO.getTime() + 60_000)
  put(base, 'docs/note-1.md', '# Note 1\nrenamed subject entirely\n', later)
  put(base, 'docs/added.md', 'a renamed subject appears in a new note\n', later)
  // This process exits right after init() and its searches: the update was not saved.
  const quick = await run({ base, dir, queries: QUERIES, exit: true })
  assert.equal(quick.report.reread, 2)
  assert.equal(fs.statSync(file).mtimeMs, built, 'init() did not wait for a save')
  // The next one reads the same two files again, finds the same results, and saves at destroy().
  const next = await run({ base, dir, queries: QUERIES })
  assert.equal(next.report.reread, 2)
  assert.deepEqual(next.results, quick.results)
  assert.ok(next.results['renamed subject'].some((r) => r.startsWith('docs/added.md')))
  assert.equal((await run({ base, dir, queries: QUERIES })).report.reread, 0)
})

/** Replaces a file as docs/persistence.md asks (a new file renamed over it; the snapshot is read-only). */
function replaceFile(file, bytes) {
  fs.writeFileSync(`${file}.new`, bytes)
  fs.renameSync(`${file}.new`, file)
}

test('a damaged, truncated, foreign or other-version snapshot is rebuilt and reported, never misread', async (t) => {
  const { base, dir, root } = corpus(t)
  const reference = await run({ base, dir: path.join(root, 'reference'), queries: QUERIES })
  const file = path.join(dir, 'snapshot.wss')
  const damages = {
    checksum: (b) => {
      b[64] ^= 0x40 // inside the checksummed part (the texts, last, have their own)
      return b
    },
    truncated: (b) => b.subarray(0, Math.floor(b.length / 2)),
    'format version': (b) => {
      b[8] = 77
      return b
    },
    'not a workspace-search snapshot': () => Buffer.from('{"index": "something else"}'),
  }
  for (const [why, damage] of Object.entries(damages)) {
    await run({ base, dir, queries: QUERIES })
    replaceFile(file, damage(fs.readFileSync(file)))
    const out = await run({ base, dir, queries: QUERIES })
    assert.equal(out.report.warnings.length, 1, why)
    assert.match(out.report.warnings[0], new RegExp(why))
    assert.match(out.report.warnings[0], /rebuilt from the files/)
    assert.equal(out.report.reread, 41, why)
    assert.deepEqual(out.results, reference.results, why)
    const next = await run({ base, dir, queries: QUERIES })
    assert.deepEqual([next.report.reused, next.report.warnings], [41, []], `${why}: saved whole again`)
  }
  // Other options (here the chunk size) make another index: rebuilt, said so.
  const other = await run({ base, dir, queries: QUERIES, chunking: { maxChars: 500 } })
  assert.match(other.report.warnings[0] ?? '', /built with other options/)
})

test('a JavaScript tokenizer is known by what it does: closures or bound functions of one source text never share a snapshot; tokenizerId names one', async (t) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wss-persist-')))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const base = path.join(root, 'ws')
  const dir = path.join(root, 'snap')
  put(base, 'docs/a.md', 'Apple Banana\n')
  const open = (tokenize) => new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: { tokenize }, autoIndexPaths: ['docs'], persist: { dir } })
  const start = async (tokenize, query) => {
    const ws = open(tokenize)
    const report = await ws.init()
    const found = (await ws.search(query)).map((r) => r.id)
    await ws.destroy()
    return { report, found }
  }
  // Same source text, other behaviour: one keeps the case of words, the other lowercases them.
  const closure = (lower) => (text) => text.split(/\s+/).filter(Boolean).map((w) => (lower ? w.toLowerCase() : w))
  function mapped(text) {
    return text.split(/\s+/).filter(Boolean).map(this)
  }
  const pairs = {
    closures: [closure(false), closure(true)],
    'bound functions': [mapped.bind((w) => w), mapped.bind((w) => w.toLowerCase())],
  }
  for (const [what, [keepsCase, lowercases]] of Object.entries(pairs)) {
    fs.rmSync(dir, { recursive: true, force: true })
    assert.deepEqual((await start({ tokenizer: keepsCase }, 'apple')).found, [], what)
    const other = await start({ tokenizer: lowercases }, 'apple')
    assert.match(other.report.warnings[0] ?? '', /built with other options \(js tokenizer: /, what)
    assert.deepEqual([other.report.reused, other.report.reread, other.found], [0, 1, ['docs/a.md']], what)
    // The same behaviour again (another closure, made anew) reuses it.
    const again = await start({ tokenizer: what === 'closures' ? closure(true) : mapped.bind((w) => w.toLowerCase()) }, 'apple')
    assert.deepEqual([again.report.reused, again.report.warnings, again.found], [1, [], ['docs/a.md']], what)
  }
  // tokenizerId is used instead: trusted as given, and its change rebuilds.
  fs.rmSync(dir, { recursive: true, force: true })
  await start({ tokenizer: closure(true), tokenizerId: 'words-v1' }, 'apple')
  const trusted = await start({ tokenizer: closure(false), tokenizerId: 'words-v1' }, 'apple')
  assert.deepEqual([trusted.report.reused, trusted.report.warnings], [1, []])
  const renamed = await start({ tokenizer: closure(false), tokenizerId: 'words-v2' }, 'Apple')
  assert.match(renamed.report.warnings[0] ?? '', /js tokenizer: id "words-v2" \(saved: js tokenizer: id "words-v1"\)/)
  assert.deepEqual([renamed.report.reread, renamed.found], [1, ['docs/a.md']])
  // A tokenizer that throws on a probe text is still known by the others; its error at init() is the caller's.
  const picky = (text) => {
    if (/[^\x00-\x7f]/.test(text)) throw new Error('ASCII only')
    return text.toLowerCase().split(/\s+/).filter(Boolean)
  }
  fs.rmSync(dir, { recursive: true, force: true })
  assert.deepEqual((await start({ tokenizer: picky }, 'apple')).found, ['docs/a.md'])
  assert.throws(() => open({ tokenizerId: 'words-v1' }), { name: 'TypeError', message: 'bm25.tokenize.tokenizerId names a custom tokenizer: give bm25.tokenize.tokenizer too' })
  assert.throws(() => open({ tokenizer: picky, tokenizerId: '' }), { name: 'TypeError', message: 'bm25.tokenize.tokenizerId must be a non-empty string' })
})

test('a process killed (SIGKILL) while saving leaves a snapshot the next one loads', async (t) => {
  const { base, dir } = corpus(t)
  // A larger index, so that a save takes a while.
  for (let i = 0; i < 400; i++) put(base, `docs/bulk/${i}.md`, `bulk file ${i} ${'filler text for size '.repeat(200)}`)
  const reference = await run({ base, dir, queries: QUERIES })
  let killedMidSave = 0
  for (let round = 0; round < 6; round++) {
    const child = spawn(process.execPath, [CHILD, JSON.stringify({ base, dir, queries: [], loop: 'save' })], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    await new Promise((resolve) => {
      child.stdout.on('data', (d) => {
        out += d
        const saves = (out.match(/saving/g) ?? []).length
        if (saves >= 2 + round) resolve()
      })
    })
    // Somewhere inside the next save.
    await new Promise((r) => setTimeout(r, 1 + round * 3))
    child.kill('SIGKILL')
    await new Promise((r) => child.on('exit', r))
    if (fs.readdirSync(dir).some((f) => f.includes('.tmp-'))) killedMidSave++
    const after = await run({ base, dir, queries: QUERIES })
    assert.deepEqual(after.report.warnings, [], `round ${round}`)
    assert.equal(after.report.reread, 0, `round ${round}: the snapshot was loaded`)
    // The saved state is one the killed process had: the files, and 0-50 of its extra documents.
    const extra = after.stats.documents - reference.stats.documents
    assert.ok(extra >= 0 && extra <= 50, `round ${round}: ${extra} extra documents`)
    const idsOf = (r) => r.map((line) => line.split(' ')[0])
    for (const q of QUERIES) assert.deepEqual(idsOf(after.results[q]), idsOf(reference.results[q]), `round ${round}: ${q}`)
    assert.ok(!fs.readdirSync(dir).some((f) => f.includes('.tmp-')), 'stale temporary files are removed')
  }
  assert.ok(killedMidSave > 0, 'at least one kill landed inside a save')
})

test('two processes on one directory: one writes, the other loads and does not save', async (t) => {
  const { base, dir } = corpus(t)
  await run({ base, dir, queries: QUERIES })
  const holder = spawn(process.execPath, [CHILD, JSON.stringify({ base, dir, queries: [], loop: 'hold' })], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  let out = ''
  await new Promise((resolve) => holder.stdout.on('data', (d) => (out += d).includes('holding') && resolve()))
  const before = fs.statSync(path.join(dir, 'snapshot.wss')).mtimeMs
  put(base, 'docs/while-held.md', 'written while another process holds the directory', new Date(HOUR_AGO.getTime() + 1000))
  const reader = await run({ base, dir, queries: ['while held'], save: true })
  assert.match(reader.report.warnings.join(' '), new RegExp(`written by process ${holder.pid}; this workspace loads it but does not save`))
  assert.equal(reader.report.reused, 41)
  assert.ok(reader.results['while held'][0].startsWith('docs/while-held.md'), 'its own index is up to date')
  assert.equal(reader.saved, false)
  assert.equal(fs.statSync(path.join(dir, 'snapshot.wss')).mtimeMs, before)
  holder.stdin.end()
  await new Promise((r) => holder.on('exit', r))
  const next = await run({ base, dir, queries: [] })
  assert.deepEqual(next.report.warnings, [])
  assert.equal(next.report.reread, 1)
})

test('the embedded store: no embedder call for unchanged texts across restarts; another embedder re-embeds once', async (t) => {
  const { base, dir, root } = corpus(t)
  const first = await run({ base, dir, queries: QUERIES, embedder: { id: 'hash-32' } })
  assert.ok(first.embedded.length > 41, 'every document embedded once')
  assert.ok(!first.embedded.includes(CANARY), 'with embedderId, no canary')
  const second = await run({ base, dir, queries: QUERIES, embedder: { id: 'hash-32' } })
  assert.deepEqual(second.embedded, [])
  assert.equal(second.report.embedded, 0)
  assert.deepEqual(second.results, first.results)
  assert.equal(second.stats.vectors, first.stats.vectors)
  // One line of the book changes: only the chunk(s) holding it are embedded.
  const book = fs.readFileSync(path.join(base, 'docs/book.md'), 'utf8').replace('line 599 of', 'line 599 (edited) of')
  put(base, 'docs/book.md', book, new Date(HOUR_AGO.getTime() + 1000))
  const edited = await run({ base, dir, queries: QUERIES, embedder: { id: 'hash-32' } })
  assert.ok(edited.embedded.length >= 1 && edited.embedded.length < first.report.chunks / 2, `${edited.embedded.length} texts`)
  assert.ok(edited.embedded.some((t) => t.includes('line 599 (edited)')))
  // Without embedderId: one canary per start, nothing else.
  const canaryDir = path.join(root, 'canary')
  const c1 = await run({ base, dir: canaryDir, queries: [], embedder: {} })
  assert.equal(c1.embedded.filter((t) => t === CANARY).length, 1)
  const c2 = await run({ base, dir: canaryDir, queries: QUERIES, embedder: {} })
  assert.deepEqual(c2.embedded, [CANARY])
  const other = await run({ base, dir: canaryDir, queries: QUERIES, embedder: { model: 'b' } })
  assert.match(other.report.warnings.join(' '), /the embedder changed/)
  assert.equal(other.embedded.length, c1.embedded.length)
  const otherAgain = await run({ base, dir: canaryDir, queries: [], embedder: { model: 'b' } })
  assert.deepEqual(otherAgain.embedded, [CANARY])
})

const pgUp = await pgAvailable()
for (const kind of ['libsql', 'pg']) {
  const skip = kind === 'pg' && !pgUp ? `no PostgreSQL with pgvector at ${PG_URL}` : false
  test(`${kind} across restarts: unchanged texts not embedded again, a deleted file's vectors gone`, { skip }, async (t) => {
    const { base, dir, root } = corpus(t)
    const indexName = `persist_${kind}_${process.pid}_${Date.now() % 100000}`
    const store = kind === 'libsql' ? `libsql:${path.join(root, 'vectors.db')}` : 'pg:'
    const job = { base, dir, store, indexName, pgUrl: PG_URL, embedder: { id: 'hash-32' }, queries: QUERIES }
    const first = await run(job)
    assert.ok(first.stored.includes('docs/note-3.md'))
    assert.ok(first.stored.length > 41)
    fs.rmSync(path.join(base, 'docs/note-3.md'))
    const second = await run(job)
    assert.deepEqual(second.embedded, [])
    assert.equal(second.report.removed, 1)
    assert.ok(!second.stored.includes('docs/note-3.md'), 'the deleted file has no vector left')
    assert.equal(second.stored.length, first.stored.length - 1)
    const third = await run(job)
    assert.deepEqual(third.embedded, [])
    assert.deepEqual(third.stored, second.stored)
  })

  test(`${kind}: a process killed (SIGKILL) right after store writes leaves no vector the index lacks`, { skip }, async (t) => {
    const { base, dir, root } = corpus(t)
    const indexName = `crash_${kind}_${process.pid}_${Date.now() % 100000}`
    const store = kind === 'libsql' ? `libsql:${path.join(root, 'vectors.db')}` : 'pg:'
    const job = { base, dir, store, indexName, pgUrl: PG_URL, embedder: { id: 'hash-32' }, queries: [] }
    const first = await run(job)
    // A new file (embedded and written by the next start), and a document given to
    // index(): both reach the store, then the process dies before any save.
    put(base, 'docs/new-file.md', 'a file only the killed process saw\n')
    const killed = await new Promise((resolve) => execFile(process.execPath, [CHILD, JSON.stringify({ ...job, crash: { index: ['manual/lost', 'a document the killed process lost'] } })], (err) => resolve(err?.signal)))
    assert.equal(killed, 'SIGKILL')
    fs.rmSync(path.join(base, 'docs/new-file.md'))
    const after = await run(job)
    assert.ok(!after.stored.includes('docs/new-file.md'), 'the deleted file has no vector left')
    assert.ok(!after.stored.includes('manual/lost'), 'the lost document has no vector left')
    assert.deepEqual(after.stored, first.stored, 'the store holds exactly what the index holds')
    // And it stays so: the log was trimmed by the save, nothing more to undo.
    const again = await run(job)
    assert.deepEqual([again.embedded, again.stored], [[], first.stored])
  })

  test(`${kind}: texts embedded again after a crash count in the report’s embedded (it said 0)`, { skip }, async (t) => {
    const { base, dir, root } = corpus(t)
    const indexName = `recount_${kind}_${process.pid}_${Date.now() % 100000}`
    const store = kind === 'libsql' ? `libsql:${path.join(root, 'vectors.db')}` : 'pg:'
    const job = { base, dir, store, indexName, pgUrl: PG_URL, embedder: { id: 'hash-32' }, queries: [] }
    // At rest: no file is read again for its time (changed within 2 s of a scan), which saved.
    const anHourAgo = new Date(Date.now() - 3_600_000)
    for (const f of fs.readdirSync(path.join(base, 'docs'))) fs.utimesSync(path.join(base, 'docs', f), anHourAgo, anHourAgo)
    await run({ ...job, index: [['manual/kept', 'a document given to index and saved']], save: true })
    const killed = await new Promise((resolve) => execFile(process.execPath, [CHILD, JSON.stringify({ ...job, crash: { index: ['manual/kept', 'its text changed, then the process died'] } })], (err) => resolve(err?.signal)))
    assert.equal(killed, 'SIGKILL')
    const after = await run(job)
    assert.deepEqual(after.embedded, ['a document given to index and saved'])
    assert.equal(after.report.embedded, 1)
    // Once: the recovery's start saves, which trims the log. With nothing else changed
    // (files at rest) no save came, each start undid the log again, its own records
    // added, and the log doubled at every start.
    for (let i = 0; i < 2; i++) {
      const again = await run(job)
      assert.deepEqual(again.embedded, [], `start ${i + 2} after the crash`)
    }
    assert.equal(fs.statSync(path.join(dir, 'vectors.intent')).size, 0)
  })
}

test('index() and indexMany() do not embed a document the store already holds as it is', async () => {
  const { hashEmbed } = await import('./vector-helpers.mjs')
  const texts = []
  const embedder = Object.assign(
    async (batch) => {
      texts.push(...batch)
      return batch.map((t) => hashEmbed(t, 16))
    },
    { batch: true, maxBatchSize: 8 },
  )
  const ws = new Workspace({ bm25: true, embedder })
  await ws.index('a', 'the first text')
  await ws.index('a', 'the first text')
  assert.deepEqual(texts, ['the first text'])
  await ws.index('a', 'the first text', { metadata: { tag: 'new' } })
  assert.equal(texts.length, 2, 'other metadata is written again')
  const docs = Array.from({ length: 20 }, (_, i) => ({ path: `d${i}`, content: `document number ${i}` }))
  const first = await ws.indexMany(docs)
  const again = await ws.indexMany(docs)
  assert.deepEqual([first.embedded, again.embedded, again.indexed], [20, 0, 20])
  await ws.unindex('d3')
  const third = await ws.indexMany(docs)
  assert.equal(third.embedded, 1, 'only the removed one')
  assert.deepEqual((await ws.search('number 3', { mode: 'vector', topK: 1 })).map((r) => r.id), ['d3'])
  await ws.destroy()
})

test('a chunk whose text moved to other lines is written again, so vector hits keep their line ranges', async (t) => {
  const { base, dir } = corpus(t)
  const job = { base, dir, queries: ['line 599'], embedder: { id: 'hash-32' }, mode: 'vector' }
  const before = await run(job)
  const book = path.join(base, 'docs/book.md')
  put(base, 'docs/book.md', `preface\n${fs.readFileSync(book, 'utf8')}`, new Date(HOUR_AGO.getTime() + 1000))
  const after = await run(job)
  assert.ok(after.embedded.length >= 1)
  const range = (out) => out.results['line 599'].find((r) => r.startsWith('docs/book.md')).split(' ')[2]
  const [s1, e1] = range(before).split('-').map(Number)
  assert.equal(range(after), `${s1 + 1}-${e1 + 1}`)
})

test('destroy() saves and gives the directory up: the next workspace of the same process writes it', async (t) => {
  const { base, dir } = corpus(t)
  const open = () => persisted(base, dir)
  const first = open()
  await first.init()
  await first.index('manual/kept', 'a document indexed by hand survives restarts')
  await first.destroy()
  const second = open()
  const report = await second.init()
  assert.deepEqual([report.reused, report.reread, report.warnings], [41, 0, []])
  assert.deepEqual((await second.search('indexed by hand')).map((r) => r.id), ['manual/kept'])
  assert.equal(await second.save(), true)
  await second.destroy()
})

test('a background save that fails is kept in stats().saveError until a save succeeds', async (t) => {
  const { base, dir } = corpus(t)
  const ws = persisted(base, dir)
  await ws.init()
  assert.equal(ws.stats().saveError, undefined)
  // The directory disappears under the running workspace (root ignores modes, so it is removed).
  fs.rmSync(dir, { recursive: true })
  await ws.index('manual/one', 'written while the directory is gone')
  const error = await eventually('saveError after the background save', () => ws.stats().saveError)
  assert.match(error, /persist: could not save to .*snap/)
  assert.deepEqual((await ws.search('directory is gone')).map((r) => r.id), ['manual/one'])
  await assert.rejects(ws.save(), /could not save/)
  fs.mkdirSync(dir)
  await ws.index('manual/two', 'written once the directory is back')
  await eventually('saveError cleared by the next background save', () => ws.stats().saveError === undefined)
  assert.ok(fs.existsSync(path.join(dir, 'snapshot.wss')))
  await ws.destroy()
})

test('a loaded snapshot is used in place; a file rewritten in place underneath gives texts read again from the files, or an error, never a crash', async (t) => {
  const { base, dir } = corpus(t)
  const open = () => persisted(base, dir)
  const cold = open()
  await cold.init()
  const expected = await cold.search('alpha topic', { topK: 3 })
  await cold.destroy()
  const warm = open()
  assert.equal((await warm.init()).reread, 0)
  const got = await warm.search('alpha topic', { topK: 3 })
  assert.deepEqual(got.map((r) => [r.id, r.content, r.lineRange]), expected.map((r) => [r.id, r.content, r.lineRange]))
  const file = path.join(dir, 'snapshot.wss')
  if (process.platform !== 'win32') assert.equal(fs.statSync(file).mode & 0o222, 0, 'the snapshot is read-only')
  // Another program makes it writable and rewrites it in place (same inode, same size, other bytes).
  fs.chmodSync(file, 0o644)
  fs.writeFileSync(file, Buffer.alloc(fs.statSync(file).size, 0x78))
  // Postings viewed in the file are now garbage: a search gives texts read again from
  // their intact files (never blank, never the garbage) or a clear error, never a crash.
  try {
    const later = await warm.search('gamma searching', { topK: 3 })
    for (const r of later) assert.equal(r.content, fs.readFileSync(path.join(base, r.metadata?.sourceFile ?? r.id), 'utf8').includes(r.content) ? r.content : null)
  } catch (e) {
    assert.match(String(e.message), /workspace-search internal error|the saved index is damaged/)
  }
  await warm.index('manual/after', 'written after the rewrite')
  // The save writes every text again: from the files where the snapshot fails them, else it
  // fails; postings it finds written over fail it too (never saved as they now read).
  await warm.save().catch((e) => assert.match(String(e.message), /changed since it was loaded|the loaded index's term/))
  await warm.destroy().catch(() => {})
  // The next process starts from a sound snapshot or rebuilds from the files.
  const next = open()
  await next.init()
  const again = await next.search('gamma searching', { topK: 3 })
  assert.ok(again.length > 0 && again.every((r) => r.content.trim().length > 0))
  await next.destroy()
})

test('a text damaged in the snapshot is read again from its intact file, or left out when the file changed too; never shown blank', async (t) => {
  const { base, dir } = corpus(t)
  const cold = persisted(base, dir)
  await cold.init()
  const [hit, second] = await cold.search('alpha topic', { topK: 2 })
  await cold.destroy()
  // One byte of each text flips in the snapshot (replaced by rename: the file is read-only).
  const file = path.join(dir, 'snapshot.wss')
  const bytes = fs.readFileSync(file)
  for (const r of [hit, second]) {
    const at = bytes.indexOf(Buffer.from(r.content))
    assert.ok(at > 0, 'the text is stored whole')
    bytes[at] ^= 0x01
  }
  replaceFile(file, bytes)
  // The second file changes on disk too (same size, times kept): its text is nowhere intact.
  const secondFile = path.join(base, second.id)
  const stat = fs.statSync(secondFile)
  fs.writeFileSync(secondFile, fs.readFileSync(secondFile, 'utf8').replace(/a/, 'b'))
  fs.utimesSync(secondFile, stat.atime, stat.mtime)
  // Texts are outside the whole-file checksum (loading does not read them): it loads.
  const warm = persisted(base, dir)
  await warm.init()
  const results = await warm.search('alpha topic', { topK: 5 })
  const again = results.find((r) => r.id === hit.id)
  assert.equal(again?.content, hit.content, 'read again from the intact file')
  assert.ok(!results.some((r) => /^ +$/.test(r.content)), 'no blank text')
  assert.ok(!results.some((r) => r.id === second.id), 'a text intact nowhere is left out')
  assert.ok(!fs.existsSync(file), 'the damaged snapshot is removed')
  await warm.destroy().catch(() => {})
  // The next start has a sound snapshot (the one saved after the changed file was read again).
  const next = persisted(base, dir)
  await next.init()
  const later = await next.search('alpha topic', { topK: 5 })
  assert.equal(later.find((r) => r.id === hit.id)?.content, hit.content)
  assert.ok(!later.some((r) => /^ +$/.test(r.content)))
  await next.destroy()
})

test('bad persist, embedderId and watch values are typed errors; an unusable directory is a warning, not a failure', async (t) => {
  const { base, root } = corpus(t)
  const fsys = new LocalFilesystem({ basePath: base })
  const bad = [
    [{ persist: '.index' }, /persist must be true, false or \{ dir: string \}, got/],
    [{ persist: { dir: '' } }, /persist.dir must be a non-empty string/],
    [{ persist: { dir: 7 } }, /persist.dir/],
    [{ persist: { folder: 'x' } }, /Unknown option/],
    [{ embedderId: '' }, /embedderId must be a non-empty string/],
    [{ watch: 'yes' }, /watch/],
  ]
  for (const [options, message] of bad) {
    assert.throws(() => new Workspace({ filesystem: fsys, bm25: true, ...options }), { name: 'TypeError', message }, JSON.stringify(options))
  }
  assert.throws(() => new Workspace({ bm25: true, persist: true }), /persist: true needs a filesystem with a basePath/)
  // A directory path that is a file: the workspace works, in memory, and says why nothing is saved.
  const file = path.join(root, 'not-a-dir')
  fs.writeFileSync(file, 'x')
  const ws = new Workspace({ filesystem: fsys, bm25: true, autoIndexPaths: ['docs'], persist: { dir: file } })
  const report = await ws.init()
  assert.equal(report.indexed, 41)
  assert.match(report.warnings.join(' '), /cannot be used .*nothing is saved/)
  assert.equal(await ws.save(), false)
  assert.equal((await ws.search('alpha topic')).length > 0, true)
  await ws.destroy()
  assert.equal(fs.readFileSync(file, 'utf8'), 'x')
})

test('writes made before the first init() land on top of the loaded index (BM25, vectors, ledger)', async (t) => {
  const { hashEmbed } = await import('./vector-helpers.mjs')
  const { base, dir } = corpus(t)
  const embedder = Object.assign(async (texts) => texts.map((x) => hashEmbed(x, 16)), { batch: true })
  const open = () =>
    new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, embedder, embedderId: 'h16', autoIndexPaths: ['docs'], persist: { dir } })
  const first = open()
  await first.init()
  const documents = first.stats().documents
  await first.destroy()
  const second = open()
  await second.index('manual/early', 'a pelican written before init')
  await second.unindex('docs/note-7.md')
  const report = await second.init()
  // A file removed by hand is read again by init(), as a full build would.
  assert.deepEqual([report.reused, report.reread], [40, 1])
  assert.deepEqual((await second.search('pelican', { mode: 'bm25' })).map((r) => r.id), ['manual/early'])
  assert.equal((await second.search('pelican written before init', { mode: 'vector', topK: 1 }))[0].id, 'manual/early')
  assert.ok((await second.search('alpha topic', { mode: 'bm25', topK: 50 })).some((r) => r.id === 'docs/note-5.md'), 'the loaded documents are there')
  assert.equal(second.stats().documents, documents + 1, 'the saved documents and the early one')
  await second.destroy()
})

test('removeByPrefix() and clear() before the first init() of a persisted workspace reject as not ready (the documents they name are not loaded yet, and the load would bring them back); after init() they remove what was saved', async (t) => {
  const { dir } = corpus(t)
  const open = () => new Workspace({ bm25: true, persist: { dir } })
  const first = open()
  await first.init()
  await first.indexMany([{ path: 'notes/a.md', content: 'pelican one' }, { path: 'notes/b.md', content: 'pelican two' }, { path: 'kept.md', content: 'pelican kept' }])
  await first.destroy()
  const second = open()
  const notReady = { name: 'WorkspaceNotReadyError', message: 'Workspace is not ready (status: pending)' }
  await assert.rejects(second.removeByPrefix('notes/'), notReady)
  await assert.rejects(second.clear(), notReady)
  await second.init()
  assert.equal(second.stats().documents, 3)
  assert.equal(await second.removeByPrefix('notes/'), 2)
  await second.destroy()
  const third = open()
  await third.init()
  assert.deepEqual((await third.search('pelican')).map((r) => r.id), ['kept.md'])
  await third.clear()
  await third.destroy()
  const fourth = open()
  await fourth.init()
  assert.equal(fourth.stats().documents, 0)
  await fourth.destroy()
})

test('persist.dir: an embedder that throws when checked fails init() and loads nothing; save() writes nothing over the snapshot, and init() again loads every document', async (t) => {
  const { hashEmbed } = await import('./vector-helpers.mjs')
  const { base, dir } = corpus(t)
  let down = false
  const embedder = async (text) => {
    if (down) throw new Error('the embedder is down for this test')
    return hashEmbed(text, 16)
  }
  const open = () => new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, embedder, autoIndexPaths: ['docs'], persist: { dir } })
  const first = open()
  await first.init()
  await first.index('manual/pelican', 'a pelican given by hand')
  const documents = first.stats().documents
  await first.destroy()
  const written = fs.statSync(path.join(dir, 'snapshot.wss')).mtimeMs
  down = true
  const second = open()
  await assert.rejects(second.init(), /the embedder is down for this test/)
  assert.equal(await second.save(), false)
  assert.equal(fs.statSync(path.join(dir, 'snapshot.wss')).mtimeMs, written, 'the snapshot is as it was')
  down = false
  await second.init()
  assert.equal(second.stats().documents, documents)
  assert.deepEqual((await second.search('pelican', { mode: 'bm25', topK: 1 })).map((r) => r.id), ['manual/pelican'])
  await second.destroy()
  const third = open()
  await third.init()
  assert.equal(third.stats().documents, documents)
  await third.destroy()
})

test('a crash after an index() write, then a recovery whose embedder refuses that document: the log stays, and the next start writes its vector again', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-recover-'))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  fs.mkdirSync(path.join(root, 'ws', 'docs'), { recursive: true })
  fs.writeFileSync(path.join(root, 'ws', 'docs', 'a.md'), 'a file')
  const script = path.join(root, 'phase.mjs')
  fs.writeFileSync(script, `
    import fs from 'node:fs'
    import path from 'node:path'
    const { Workspace, LocalFilesystem } = (await import(${JSON.stringify(new URL('../index.js', import.meta.url).href)})).default
    const [root, phase] = process.argv.slice(2)
    const file = path.join(root, 'store.json')
    const load = () => (fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {})
    const store = {
      async createIndex() {},
      async upsert({ ids, vectors, metadata }) { const o = load(); ids.forEach((id, i) => (o[id] = { v: vectors[i], m: metadata[i] })); fs.writeFileSync(file, JSON.stringify(o)); return ids },
      async query({ topK }) { return Object.entries(load()).slice(0, topK).map(([id, x]) => ({ id, score: 1, metadata: x.m })) },
      async deleteVectors(args) { const o = load(); for (const id of args.ids ?? []) delete o[id]; if (args.filter?.sourceFile) for (const [k, x] of Object.entries(o)) if (x.m?.sourceFile === args.filter.sourceFile) delete o[k]; fs.writeFileSync(file, JSON.stringify(o)) },
    }
    const embedder = Object.assign(async (texts) => {
      if (phase === 'recover' && texts.some((t) => t.includes('manual'))) throw new Error('the embedder refuses it')
      return texts.map((t) => [(t.length % 7) + 1, 1, 1, 2])
    }, { batch: true })
    const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: path.join(root, 'ws') }), bm25: true, embedder, embedderId: 'e', autoIndexPaths: ['docs'], persist: { dir: path.join(root, 'snap') }, vectorStore: store, searchIndexName: 'k' })
    if (phase === 'crash') {
      await ws.init()
      await ws.index('manual/x', 'a manual note')
      await ws.save()
      await ws.index('manual/x', 'a manual note, again')
      process.exit(0) // killed before its next save
    }
    const report = await ws.init()
    await ws.destroy()
    console.log(JSON.stringify({ warnings: report.warnings, stored: 'manual/x' in load() }))
  `)
  const phase = (name) => execFileSync(process.execPath, [script, root, name], { encoding: 'utf8' }).trim().split('\n').pop()
  phase('crash')
  const recovered = JSON.parse(phase('recover'))
  assert.match(recovered.warnings.join(' '), /manual\/x could not be embedded again after a crash/)
  assert.equal(recovered.stored, false)
  const again = JSON.parse(phase('again'))
  assert.deepEqual(again.warnings, [])
  assert.equal(again.stored, true, 'the next start wrote its vector again')
})

// (That the graph is restored rather than rebuilt is checked in core:
// vectors::store::tests::a_snapshot_keeps_the_graph...)
test("a LocalVector's HNSW graph goes through a restart: the same answers, and a document removed after it is never found", async (t) => {
  const { hashEmbed } = await import('./vector-helpers.mjs')
  const { base, dir } = corpus(t)
  const embedder = Object.assign(async (texts) => texts.map((x) => hashEmbed(x, 16)), { batch: true })
  const open = (store) =>
    new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, embedder, embedderId: 'h16', autoIndexPaths: ['docs'], persist: { dir }, vectorStore: store, searchIndexName: 'kept' })
  const graphOf = async (store) => (await store.describeIndex({ indexName: 'kept' })).graph
  const firstStore = new lib.LocalVector({ index: 'hnsw' })
  const first = open(firstStore)
  await first.init()
  await eventually('the graph is built', async () => (await graphOf(firstStore))?.state === 'ready' && (await graphOf(firstStore)).pending === 0)
  const before = (await first.search('alpha topic', { mode: 'vector', topK: 5 })).map((r) => r.id)
  await first.destroy()
  const secondStore = new lib.LocalVector({ index: 'hnsw' })
  const second = open(secondStore)
  const report = await second.init()
  assert.equal(report.reread, 0)
  // Restored when the last save came after the graph was built; else built
  // again (a save that ran while it was building had none to keep).
  await eventually('the graph is ready', async () => (await graphOf(secondStore))?.state === 'ready')
  assert.deepEqual(await graphOf(secondStore), { state: 'ready', removed: 0, pending: 0 })
  assert.deepEqual((await second.search('alpha topic', { mode: 'vector', topK: 5 })).map((r) => r.id), before)
  await second.unindex(before[0])
  assert.ok(!(await second.search('alpha topic', { mode: 'vector', topK: 40 })).some((r) => r.id === before[0]))
  await second.destroy()
})

/** A folder of three files and a persist dir; `open(embedder)` makes a workspace over them. */
function vectorSideCase(t) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-vside-'))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const base = path.join(root, 'base')
  for (let i = 0; i < 3; i++) put(base, `f${i}.md`, `file ${i} about orchards and pears${i}`)
  const open = (embedder) => new Workspace({
    filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['.'],
    persist: { dir: path.join(root, 'p') }, ...(embedder ? { embedder } : {}),
  })
  return open
}

test('an embedder added to a persisted workspace keeps its index() records and embeds them (the snapshot was rebuilt from the files, losing them)', async (t) => {
  const { hashEmbed } = await import('./vector-helpers.mjs')
  const open = vectorSideCase(t)
  const first = open()
  await first.init()
  await first.index('rec/apples', 'a record about apples and quinces')
  await first.destroy()
  const calls = []
  const second = open(async (text) => { calls.push(text); return hashEmbed(text) })
  const report = await second.init()
  assert.match(report.warnings.join(' '), /the vectors' configuration changed .*every text is embedded again/)
  assert.deepEqual(report.failed, [])
  assert.equal((await second.search('quinces', { topK: 1, mode: 'bm25' }))[0]?.id, 'rec/apples', 'the record is kept')
  assert.equal((await second.search('a record about apples and quinces', { topK: 1, mode: 'vector' }))[0]?.id, 'rec/apples')
  assert.ok(calls.includes('a record about apples and quinces'))
  await second.destroy()
  const third = open(async (text) => hashEmbed(text))
  const again = await third.init()
  assert.equal(again.embedded, 0, 'a restart embeds nothing again')
  assert.deepEqual(again.warnings, [])
  assert.equal((await third.search('a record about apples and quinces', { topK: 1, mode: 'vector' }))[0]?.id, 'rec/apples')
  await third.destroy()
  const without = open()
  await without.init()
  assert.equal((await without.search('quinces', { topK: 1 }))[0]?.id, 'rec/apples', 'the embedder taken away: the record stays')
  await without.destroy()
})

test('a changed embedder that refuses one text: init() resolves, the text is listed in report.failed and kept for keyword search, and the next init() embeds it (init() rejected at every start)', async (t) => {
  const { hashEmbed } = await import('./vector-helpers.mjs')
  const open = vectorSideCase(t)
  const salted = (salt, refuse = () => false) => async (text) => {
    if (refuse(text)) throw new Error('text refused for this test')
    return hashEmbed(`${salt} ${text}`)
  }
  const first = open(salted('a'))
  await first.init()
  await first.index('rec/apples', 'a record about apples and quinces')
  await first.destroy()
  for (let start = 0; start < 2; start++) {
    const ws = open(salted('b', (text) => text.includes('quinces')))
    const report = await ws.init()
    assert.deepEqual(report.failed, [{ path: 'rec/apples', error: 'vectors not written: text refused for this test (the document is kept for keyword search, and embedded again at the next init())' }])
    assert.equal((await ws.search('quinces', { topK: 1, mode: 'bm25' }))[0]?.id, 'rec/apples')
    assert.equal((await ws.search('file 1 about orchards and pears1', { topK: 1, mode: 'vector' }))[0]?.id, 'f1.md')
    assert.equal(ws.stats().vectors, ws.stats().documents - 1, 'the refused record has no vector, and is not counted')
    await ws.destroy()
  }
  // The same workspace's next init() tries it again too (a long-lived process: the MCP server).
  let refusing = true
  const healed = open(salted('b', (text) => refusing && text.includes('quinces')))
  assert.equal((await healed.init()).failed.length, 1)
  refusing = false
  const report = await healed.init()
  assert.deepEqual(report.failed, [])
  assert.equal(report.embedded, 1)
  assert.equal((await healed.search('a record about apples and quinces', { topK: 1, mode: 'vector' }))[0]?.id, 'rec/apples')
  await healed.destroy()
})


/** A LibSQL store in memory and a temporary folder (`base` holding `files`, `dir` to persist to): the JavaScript-store cases. */
async function jsStoreCase(t, files) {
  const { hashEmbed, makeStore } = await import('./vector-helpers.mjs')
  const { store, close } = await makeStore('libsql')
  t.after(close)
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-js-store-'))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const base = path.join(root, 'base')
  for (const [rel, content] of Object.entries(files)) put(base, rel, content)
  return { hashEmbed, store, base, dir: path.join(root, 'p') }
}

test('with a JavaScript store, a file the changed embedder refuses is reported as a file, and embedded at the next init()', async (t) => {
  const files = Object.fromEntries([0, 1, 2].map((i) => [`f${i}.md`, `file ${i} about orchards and pears${i}`]))
  const { hashEmbed, store, base, dir } = await jsStoreCase(t, files)
  const open = (embedder) => new Workspace({ id: 'vside_js', filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['.'], persist: { dir }, embedder, vectorStore: store })
  const first = open(async (text) => hashEmbed(`a ${text}`))
  await first.init()
  await first.index('rec/apples', 'a record about apples')
  await first.destroy()
  let refusing = true
  const ws = open(async (text) => {
    if (refusing && text.includes('pears1')) throw new Error('text refused for this test')
    return hashEmbed(`b ${text}`)
  })
  const report = await ws.init()
  assert.deepEqual(report.failed, [{ path: 'f1.md', error: 'vectors not written: text refused for this test (the file is indexed for keyword search, and embedded again at the next init())' }])
  assert.equal((await ws.search('pears1', { topK: 1, mode: 'bm25' }))[0]?.id, 'f1.md')
  assert.equal(ws.stats().vectors, 3, "the refused file's old vector was deleted: it is not counted (it was: 4)")
  refusing = false
  const again = await ws.init()
  assert.deepEqual(again.failed, [])
  assert.equal(ws.stats().vectors, 4)
  assert.equal((await ws.search('file 1 about orchards and pears1', { topK: 1, mode: 'vector' }))[0]?.id, 'f1.md')
  await ws.destroy()
})

test('a workspace that only loads a directory another writes (no lock) writes nothing to the vector store they share: its writes reject and change nothing (they reached the store unrecorded: ghost, stale and lost vectors)', async (t) => {
  const files = Object.fromEntries([0, 1, 2].map((i) => [`docs/f${i}.md`, `common file ${i} text`]))
  const { hashEmbed, store, base, dir } = await jsStoreCase(t, files)
  const calls = []
  const open = () => new Workspace({
    id: 'reader_case', filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['docs'],
    persist: { dir }, vectorStore: store, embedderId: 'hash',
    embedder: async (text) => { calls.push(text); return hashEmbed(text) },
  })
  const writer = open()
  t.after(() => writer.destroy())
  await writer.init()
  await writer.index('api/a', 'common api a written by the writer')
  await writer.save()
  const reader = open()
  t.after(() => reader.destroy())
  const report = await reader.init()
  assert.match(report.warnings.join(' '), /loads it but does not save, nor writes to the vector store/)
  calls.length = 0
  await assert.rejects(reader.index('api/b', 'common api b written by the reader'), /vectorStore: not written: .* is written by/)
  await assert.rejects(reader.unindex('docs/f0.md'), /vectorStore: not written/)
  await assert.rejects(reader.index('api/a', 'common api a rewritten by the reader'), /vectorStore: not written/)
  assert.deepEqual(calls, [], 'nothing embedded that could not be written')
  const texts = async (ws) => Object.fromEntries((await ws.search('common', { mode: 'bm25', topK: 10 })).map((h) => [h.id, h.content]))
  const expected = { 'api/a': 'common api a written by the writer', 'docs/f0.md': 'common file 0 text', 'docs/f1.md': 'common file 1 text', 'docs/f2.md': 'common file 2 text' }
  assert.deepEqual(await texts(reader), expected, 'the reader\'s index is unchanged')
  const held = await store.query({ indexName: 'reader_case_search', queryVector: hashEmbed('common'), topK: 10 })
  assert.deepEqual(Object.fromEntries(held.map((h) => [h.id, h.metadata.text])), expected, 'the store holds exactly what the index holds')
  const search = await reader.search('common api a written by the writer', { mode: 'vector', topK: 1 })
  assert.equal(search[0]?.id, 'api/a', 'the reader searches the shared store')
  // Before its first init() too: a write takes (or finds taken) the directory's lock first.
  const early = open()
  t.after(() => early.destroy())
  calls.length = 0
  await assert.rejects(early.index('api/ghost', 'common ghost written before init'), /vectorStore: not written/)
  assert.deepEqual(calls, [], 'nothing embedded before the refusal either')
  await assert.rejects(early.unindex('docs/f1.md'), /vectorStore: not written/)
  const after = await store.query({ indexName: 'reader_case_search', queryVector: hashEmbed('common'), topK: 10 })
  assert.deepEqual(Object.fromEntries(after.map((h) => [h.id, h.metadata.text])), expected)
  // The writer gone, a reader stays one: its index is not the snapshot the writer left (it took the lock and saved it over).
  await writer.destroy()
  await assert.rejects(reader.index('api/b', 'common api b after the writer left'), /vectorStore: not written/)
  await reader.destroy()
  const next = open()
  t.after(() => next.destroy())
  assert.deepEqual((await next.init()).warnings, [])
  assert.deepEqual(await texts(next), expected)
})

test('a write before the first init() is this process\'s own, not a crash\'s: init() leaves its vector alone and does not embed it again', async (t) => {
  const { hashEmbed, store, base, dir } = await jsStoreCase(t, { 'docs/f0.md': 'common file 0 text' })
  const ops = []
  const spy = new Proxy(store, {
    get(target, key) {
      const value = target[key]
      if (typeof value !== 'function') return value
      return (...args) => {
        if (/upsert|delete/i.test(String(key))) ops.push(`${String(key)} ${JSON.stringify(args[0]?.ids ?? args[0]?.filter ?? args[0]?.id ?? '')}`)
        return value.apply(target, args)
      }
    },
  })
  const calls = []
  const ws = new Workspace({
    id: 'preinit', filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['docs'],
    persist: { dir }, vectorStore: spy, embedderId: 'hash',
    embedder: async (text) => { calls.push(text); return hashEmbed(text) },
  })
  t.after(() => ws.destroy())
  await ws.index('api/x', 'common api x before init')
  calls.length = 0
  ops.length = 0
  const report = await ws.init()
  assert.deepEqual(report.warnings, [])
  assert.ok(!calls.includes('common api x before init'), 'not embedded again')
  assert.ok(!ops.some((o) => o.includes('api/x')), `its vector left alone: ${ops}`)
  assert.equal((await ws.search('common api x before init', { topK: 1, mode: 'vector' }))[0]?.id, 'api/x')
})

test('a writer with a JavaScript store whose directory was removed refuses store writes once a save finds it so (they reached the store recorded only in the removed log of intent)', async (t) => {
  const { hashEmbed, store, base, dir } = await jsStoreCase(t, { 'f0.md': 'file zero about orchards' })
  const calls = []
  const spied = new Proxy(store, {
    get(target, key) {
      if (key === 'upsert') return (args) => { calls.push('upsert'); return target.upsert(args) }
      const value = target[key]
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  const ws = new Workspace({ id: 'lost_js', filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['.'], persist: { dir }, vectorStore: spied, embedder: async (text) => hashEmbed(text) })
  t.after(() => ws.destroy().catch(() => {}))
  await ws.init()
  fs.rmSync(dir, { recursive: true })
  fs.mkdirSync(dir)
  await assert.rejects(ws.save(), /removed or replaced since this workspace took its lock/)
  calls.length = 0
  await assert.rejects(ws.index('rec/a', 'a record written after'), /vectorStore: not written: .*removed or replaced/)
  assert.deepEqual(calls, [], 'nothing reached the store')
})

/** Flips a bit of `text` where the snapshot in `dir` stores it (a new file renamed over: it is mapped read-only); its path. */
function damageText(dir, text) {
  const file = path.join(dir, 'snapshot.wss')
  const bytes = fs.readFileSync(file)
  bytes[bytes.indexOf(Buffer.from(text)) + 3] ^= 1
  fs.writeFileSync(`${file}.new`, bytes)
  fs.renameSync(`${file}.new`, file)
  return file
}

test('a damaged text in a snapshot holding documents from index() leaves that one out, and the file is kept: the next start still has the others (it was removed, and all of them were lost)', async (t) => {
  const base = tree(t, { 'docs/file.md': 'a file about zebras\n' })
  const old = new Date(Date.now() - 3600e3)
  fs.utimesSync(path.join(base, 'docs/file.md'), old, old)
  const dir = path.join(tree(t), 'snap')
  const open = () => new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['docs'], persist: { dir } })
  let ws = open()
  await ws.init()
  await ws.index('notes/a', 'apples are red and crunchy')
  await ws.index('notes/b', 'bananas are yellow and soft')
  await ws.index('notes/c', 'cherries are small and dark')
  await ws.destroy()
  const file = damageText(dir, 'bananas are yellow')
  for (let start = 0; start < 2; start++) {
    ws = open()
    await ws.init()
    assert.deepEqual((await ws.search('bananas')).map((h) => h.id), [], 'never shown blank')
    assert.deepEqual((await ws.search('apples')).map((h) => h.id), ['notes/a'], `start ${start}`)
    assert.deepEqual((await ws.search('cherries')).map((h) => h.id), ['notes/c'], `start ${start}`)
    assert.deepEqual((await ws.search('zebras')).map((h) => h.id), ['docs/file.md'], `start ${start}`)
    assert.ok(fs.existsSync(file), 'kept')
    await ws.destroy()
  }
  // Given again, the document is saved with the others.
  ws = open()
  await ws.init()
  await ws.index('notes/b', 'bananas are yellow and soft')
  assert.equal(await ws.save(), true)
  await ws.destroy()
  ws = open()
  await ws.init()
  for (const [q, id] of [['bananas', 'notes/b'], ['apples', 'notes/a'], ['cherries', 'notes/c']]) assert.deepEqual((await ws.search(q)).map((h) => h.id), [id])
  await ws.destroy()
})

test('a damaged text in the snapshot of a workspace without files (index() documents only) leaves that one out and keeps the others for the next start', async (t) => {
  const dir = path.join(tree(t), 'snap')
  const open = () => new Workspace({ bm25: true, persist: { dir } })
  let ws = open()
  await ws.init()
  for (const [id, text] of [['notes/a', 'apples are red'], ['notes/b', 'bananas are yellow'], ['notes/c', 'cherries are dark']]) await ws.index(id, text)
  await ws.destroy()
  damageText(dir, 'bananas are yellow')
  for (let start = 0; start < 2; start++) {
    ws = open()
    await ws.init()
    assert.deepEqual((await ws.search('bananas')).map((h) => h.id), [], 'never shown blank')
    assert.deepEqual((await ws.search('apples cherries', { topK: 5 })).map((h) => h.id).sort(), ['notes/a', 'notes/c'], `start ${start}`)
    await ws.destroy()
  }
})

test('unindex() before the first init() takes the saved vector too (embedded store, LibSQL), and the same text indexed again is embedded again', async (t) => {
  for (const kind of ['embedded', 'libsql']) {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wss-unindex-early-')))
    t.after(() => fs.rmSync(root, { recursive: true, force: true }))
    const dir = path.join(root, 'snap')
    const embedder = Object.assign(async (texts) => texts.map((text) => hashEmbed(text, 32)), { batch: true })
    const stores = []
    const open = async () => {
      let vectorStore
      if (kind === 'libsql') {
        const { LibSQLVector } = await import('@mastra/libsql')
        vectorStore = new LibSQLVector({ id: 'early', url: `file:${path.join(root, 'vectors.db')}` })
        stores.push(vectorStore)
      }
      return new Workspace({ id: 'early', bm25: true, embedder, embedderId: 'e', persist: { dir }, ...(vectorStore ? { vectorStore } : {}) })
    }
    t.after(() => Promise.all(stores.map((s) => s.close?.())))
    const state = async (ws) => ({
      counts: [ws.stats().documents, ws.stats().vectors],
      vector: (await ws.search('zcommon gone', { mode: 'vector', topK: 10 })).map((h) => h.id).sort(),
    })
    let ws = await open()
    await ws.init()
    await ws.indexMany([{ path: 'keep', content: 'zcommon keep' }, { path: 'gone', content: 'zcommon gone' }])
    await ws.destroy()

    ws = await open()
    const removal = ws.unindex('gone')
    await ws.init()
    await removal
    assert.deepEqual(await state(ws), { counts: [1, 1], vector: ['keep'] }, `${kind}: in the process that removed it`)
    await ws.destroy()

    ws = await open()
    await ws.init()
    assert.deepEqual(await state(ws), { counts: [1, 1], vector: ['keep'] }, `${kind}: after a restart`)
    await ws.index('gone', 'zcommon gone')
    assert.deepEqual(await state(ws), { counts: [2, 2], vector: ['gone', 'keep'] }, `${kind}: embedded again`)
    await ws.destroy()
  }
})

test('a chunk removed through the API comes back with its file at rebuildSearchIndex() and at a restart (with persist the file stayed a chunk short, for good)', async (t) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wss-persist-')))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const base = path.join(root, 'ws')
  put(base, 'd/big.txt', Array.from({ length: 200 }, (_, i) => `common line${i} ${'x'.repeat(40)}`).join('\n'))
  const open = () => new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['d'], persist: { dir: path.join(root, 'snap') } })
  const chunks = async (ws) => (await ws.search('common', { topK: 100 })).map((r) => r.id).sort()
  const ws = open()
  await ws.init()
  const whole = await chunks(ws)
  assert.equal(whole.length, 3)
  for (const remove of [() => ws.unindex('d/big.txt#chunk-1'), () => ws.removeByPrefix('d/big.txt#chunk-2')]) {
    await remove()
    assert.equal((await chunks(ws)).length, 2)
    await ws.rebuildSearchIndex()
    assert.deepEqual(await chunks(ws), whole)
  }
  await ws.unindex('d/big.txt#chunk-0')
  await ws.destroy()
  const again = open()
  t.after(() => again.destroy())
  await again.init()
  assert.deepEqual(await chunks(again), whole, 'a restart reads it again whole')
})

test('rebuildSearchIndex() whose rebuilt index is in place before destroy() resolves (it rejected NOT_READY though searches saw it)', async (t) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wss-persist-')))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const base = path.join(root, 'ws')
  for (let i = 0; i < 3; i++) put(base, `d/f${i}.txt`, Array.from({ length: 150 }, (_, j) => `common line${j} ${'x'.repeat(30)}`).join('\n'))
  for (let round = 0; round < 24; round++) {
    const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['d'], gitHistory: false, persist: { dir: path.join(root, `snap${round}`) } })
    await ws.init()
    await ws.removeByPrefix('d/')
    const rebuilt = ws.rebuildSearchIndex().then(() => 'resolved', (e) => e.code)
    let seen = 0
    const until = Date.now() + (round % 8)
    do {
      seen = Math.max(seen, (await ws.search('common', { topK: 100 })).length)
    } while (Date.now() < until)
    await ws.destroy()
    const outcome = await rebuilt
    assert.ok(outcome === 'resolved' || seen === 0, `round ${round}: ${outcome} after searches saw ${seen} rebuilt documents`)
  }
})

test('two overlapping destroy() calls save the index once, whole, and both settle after the save (the second cleared the index under the first’s save: the next start found nothing)', async (t) => {
  const base = tree(t, { 'docs/a.md': 'router\n' })
  const dir = tree(t)
  const make = () => new Workspace({ id: 'w', filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['docs'], persist: { dir } })
  const first = make()
  await first.init()
  await first.index('notes/m.md', 'kiwi')
  const settled = []
  await Promise.all([first.destroy().then(() => settled.push('first')), first.destroy().then(() => settled.push('second'))])
  assert.deepEqual(settled, ['first', 'second'])
  assert.equal(first.status, 'destroyed')
  const next = make()
  await next.init()
  assert.deepEqual((await next.search('kiwi')).map((r) => r.id), ['notes/m.md'])
  assert.deepEqual((await next.search('router')).map((r) => r.id), ['docs/a.md'])
  await next.destroy()
})

/** A persisted workspace over docs/n0..n2.md with a user's vector store (DuckDB, in memory, or as given). */
async function storeCase(t) {
  const base = tree(t, { 'docs/n0.md': 'alpha zebra one\n', 'docs/n1.md': 'alpha zebra two\n', 'docs/n2.md': 'alpha zebra three\n' })
  const dir = tree(t)
  const stores = []
  t.after(() => Promise.all(stores.map((s) => s.close())))
  const store = async () => {
    const made = await makeStore('duckdb')
    stores.push(made)
    return made.store
  }
  const open = (vectorStore, extra = {}) =>
    new Workspace({ id: 'w', filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['docs'], vectorStore, embedder: async (text) => hashEmbed(text, 16), embedderId: 'e', persist: { dir }, ...extra })
  const vectorIds = async (ws) => (await ws.search('alpha zebra', { mode: 'vector', topK: 10 })).map((h) => h.id).sort()
  return { base, store, open, vectorIds }
}

test('a vectorStore given in place of the one the snapshot wrote to (its index not there) has every text embedded again, with a warning (the new store stayed nearly empty for good)', async (t) => {
  const { base, store, open, vectorIds } = await storeCase(t)
  const first = open(await store())
  await first.init()
  await first.destroy()
  fs.writeFileSync(path.join(base, 'docs/n1.md'), 'alpha zebra two, edited\n')
  const second = open(await store())
  const report = await second.init()
  assert.match(report.warnings.join('\n'), /the vector store holds no index .*every text is embedded again/)
  assert.equal(report.embedded, 3)
  assert.deepEqual(await vectorIds(second), ['docs/n0.md', 'docs/n1.md', 'docs/n2.md'])
  await second.destroy()
})

test('a rebuild over a snapshot made with other options deletes the vectors it wrote: a file deleted meanwhile is not found by vector search (it was, for good)', async (t) => {
  const { base, store, open, vectorIds } = await storeCase(t)
  const shared = await store()
  const first = open(shared)
  await first.init()
  await first.destroy()
  fs.rmSync(path.join(base, 'docs/n2.md'))
  const second = open(shared, { bm25: { k1: 1.2 } })
  const report = await second.init()
  assert.match(report.warnings.join('\n'), /the index was rebuilt from the files/)
  assert.deepEqual(await vectorIds(second), ['docs/n0.md', 'docs/n1.md'])
  assert.deepEqual((await second.search('alpha zebra', { mode: 'hybrid', topK: 10 })).map((h) => h.id).sort(), ['docs/n0.md', 'docs/n1.md'])
  await second.destroy()
})

test('after a first init() whose embedder was down (the store’s index never made), a healthy init() reports no failure (it reported old vectors not deleted)', async (t) => {
  const { store, open, vectorIds } = await storeCase(t)
  const shared = await store()
  const down = open(shared, { embedder: async () => { throw new Error('embedder down') } })
  const first = await down.init().catch((e) => e)
  await down.destroy()
  const again = open(shared)
  const report = await again.init()
  assert.deepEqual(report.failed, [], `first: ${first?.message ?? JSON.stringify(first?.failed)}`)
  assert.deepEqual(await vectorIds(again), ['docs/n0.md', 'docs/n1.md', 'docs/n2.md'])
  await again.destroy()
})

test('vectors of another size under the same embedderId, in a user’s store: the search and the write say the embedder changed and what to do (they said the store’s size error alone)', async (t) => {
  const { store, open } = await storeCase(t)
  const shared = await store()
  const first = open(shared, { embedder: async (text) => hashEmbed(text, 8) })
  await first.init()
  await first.destroy()
  const second = open(shared)
  await second.init()
  const changed = /vectors of 16 numbers, where the vector store's index \S+ holds vectors of 8: .*the embedder changed \(with persist and embedderId, give it a new embedderId/
  // An EmbedderError, what the store threw on those vectors its cause (it was a plain Error, the store's lost).
  const typed = (e) => e.name === 'EmbedderError' && e.code === 'EMBEDDER' && changed.test(e.message) && e.cause instanceof Error && e.message.includes(e.cause.message)
  await assert.rejects(second.search('alpha', { mode: 'vector' }), typed)
  await assert.rejects(second.index('notes/x', 'alpha note'), typed)
  await second.destroy()
})
