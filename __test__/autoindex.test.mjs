// Auto-indexing real folders: entry forms and ids, globs, .gitignore,
// containment, binary files, chunks, progress and rebuilds.
import test from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { tree, bm25Workspace, ids, Workspace, LocalFilesystem } from './helpers.mjs'

const FILES = {
  'root.md': 'root words',
  'docs/a.md': 'alpha words',
  'docs/sub/c.md': 'gamma words',
  'docs/sub/b.txt': 'beta words',
  'docs/.hidden.md': 'hidden words',
}

async function indexedIds(dir, autoIndexPaths, extra = {}) {
  const ws = bm25Workspace(dir, { autoIndexPaths, ...extra })
  const report = await ws.init()
  const found = ids(await ws.search('words', { topK: 100 })).sort()
  return { ws, report, found }
}

test('entry forms keep their form in ids', async (t) => {
  const dir = tree(t, FILES)
  const docs = ['docs/.hidden.md', 'docs/a.md', 'docs/sub/b.txt', 'docs/sub/c.md']
  assert.deepEqual((await indexedIds(dir, ['docs'])).found, docs)
  assert.deepEqual((await indexedIds(dir, ['docs/'])).found, docs)
  assert.deepEqual((await indexedIds(dir, ['./docs'])).found, docs.map((d) => `./${d}`))
  // A leading slash is relative to basePath; ids keep it.
  assert.deepEqual((await indexedIds(dir, ['/docs'])).found, docs.map((d) => `/${d}`))
  // An absolute path inside basePath is used as it is.
  assert.deepEqual((await indexedIds(dir, [path.join(dir, 'docs')])).found, docs.map((d) => path.join(dir, d)))
  assert.deepEqual((await indexedIds(dir, ['.'])).found, [...docs, 'root.md'].sort())
  assert.deepEqual((await indexedIds(dir, ['docs/a.md', 'root.md'])).found, ['docs/a.md', 'root.md'])
})

test('globs: picomatch semantics, matched directories indexed in full, no duplicates', async (t) => {
  const dir = tree(t, FILES)
  assert.deepEqual((await indexedIds(dir, ['docs/**/*.md'])).found, ['docs/a.md', 'docs/sub/c.md'])
  assert.deepEqual((await indexedIds(dir, ['**/*.md'])).found, ['docs/a.md', 'docs/sub/c.md', 'root.md'])
  assert.deepEqual((await indexedIds(dir, ['/docs/**/*.md'])).found, ['/docs/a.md', '/docs/sub/c.md'])
  assert.deepEqual((await indexedIds(dir, ['docs/*'])).found, ['docs/a.md', 'docs/sub/b.txt', 'docs/sub/c.md'])
  assert.deepEqual((await indexedIds(dir, ['docs/*.{md,txt}', 'docs/**/*.txt'])).found, ['docs/a.md', 'docs/sub/b.txt'])
  const { report } = await indexedIds(dir, ['docs', 'docs/a.md', '**/*.md'])
  assert.equal(report.indexed, 5)
})

test('.gitignore is honoured with git rules (nested files, negations); .git/ never indexed', async (t) => {
  const dir = tree(t, {
    '.gitignore': '*.log\nbuild/\n',
    'docs/keep.md': 'words',
    'docs/debug.log': 'words',
    'docs/build/out.md': 'words',
    'docs/sub/.gitignore': '*.tmp\n!important.tmp\n',
    'docs/sub/scratch.tmp': 'words',
    'docs/sub/important.tmp': 'words',
    '.git/config': 'words',
    '.git/HEAD': 'words',
  })
  assert.deepEqual((await indexedIds(dir, ['docs'])).found, ['docs/keep.md', 'docs/sub/important.tmp'])
  const { ws, found: all } = await indexedIds(dir, ['.'])
  assert.ok(!all.some((id) => id.startsWith('.git/')), all.join())
  // Hidden files are indexed, as Mastra.
  assert.deepEqual(ids(await ws.search('log')), ['.gitignore'])
  const unfiltered = (await indexedIds(dir, ['docs'], { respectGitignore: false })).found
  assert.deepEqual(unfiltered, ['docs/build/out.md', 'docs/debug.log', 'docs/keep.md', 'docs/sub/important.tmp', 'docs/sub/scratch.tmp'])
})

test('nothing outside basePath is read, through .. or symbolic links', async (t) => {
  const outside = tree(t, { 'secret.md': 'words secret', 'dir/x.md': 'words x' })
  const dir = tree(t, { 'docs/a.md': 'words a' })
  fs.symlinkSync(path.join(outside, 'secret.md'), path.join(dir, 'docs/link.md'))
  fs.symlinkSync(path.join(outside, 'dir'), path.join(dir, 'linkdir'))
  fs.symlinkSync(path.join(dir, 'docs/a.md'), path.join(dir, 'docs/inner.md'))
  fs.symlinkSync('loop.md', path.join(dir, 'docs/loop.md'))
  const { ws, report, found } = await indexedIds(dir, ['docs', '../', '..', 'linkdir', path.join(outside, 'secret.md'), 'missing'])
  assert.deepEqual(found, ['docs/a.md', 'docs/inner.md'])
  assert.deepEqual(await ws.search('secret'), [])
  const reasons = Object.fromEntries(report.skipped.map((s) => [s.path, s.reason]))
  assert.equal(reasons['docs/link.md'], 'outside basePath (symbolic link)')
  assert.equal(reasons['../'], 'outside basePath')
  assert.equal(reasons['..'], 'outside basePath')
  assert.equal(reasons.linkdir, 'outside basePath (symbolic link)')
  assert.equal(reasons.missing, 'not found')
  assert.match(reasons['docs/loop.md'], /symbolic link/)
  // An absolute path outside basePath is relative to basePath, so not found there.
  assert.equal(reasons[path.join(outside, 'secret.md')], 'not found')
})

test('binary files are skipped and reported; invalid UTF-8 becomes U+FFFD', async (t) => {
  const dir = tree(t, {
    'docs/image.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x77, 0x6f, 0x72, 0x64, 0x73]),
    'docs/latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x77, 0x6f, 0x72, 0x64, 0x73]),
  })
  const { ws, report, found } = await indexedIds(dir, ['docs'])
  assert.deepEqual(found, ['docs/latin1.txt'])
  assert.deepEqual(report.skipped, [{ path: 'docs/image.png', reason: 'binary' }])
  const [hit] = await ws.search('words')
  assert.equal(hit.content, 'caf\uFFFD words')
})

test('large files become chunks with ids path#chunk-N, sourceFile and file line numbers', async (t) => {
  const lines = Array.from({ length: 100 }, (_, i) => (i === 80 ? `needle ${'x'.repeat(90)}` : `line ${String(i + 1).padStart(3, '0')} ${'y'.repeat(90)}`).padEnd(99, 'z'))
  const text = `${lines.join('\n')}\n`
  assert.equal(text.length, 10000)
  const dir = tree(t, { 'big.md': text, 'small.md': 'needle small' })
  const ws = bm25Workspace(dir, { autoIndexPaths: ['.'] })
  const report = await ws.init()
  // Mastra makes 4 chunks (starting at lines 1, 38, 75, 99); the last only repeats lines.
  assert.equal(report.chunks, 3)
  assert.equal(report.indexed, 2)
  assert.equal(ws.stats().documents, 4)
  const results = await ws.search('needle', { topK: 10 })
  const chunk = results.find((r) => r.id.startsWith('big.md'))
  assert.equal(chunk.id, 'big.md#chunk-2')
  assert.deepEqual(chunk.metadata, { sourceFile: 'big.md' })
  assert.deepEqual(chunk.lineRange, { start: 81, end: 81 })
  assert.ok(chunk.content.startsWith(lines[74]))
  const small = results.find((r) => r.id === 'small.md')
  assert.equal(small.metadata, undefined)
  // unindex() of the file path removes its chunks.
  assert.equal(await ws.unindex('big.md'), true)
  assert.equal(ws.stats().documents, 1)
})

test('chunking options change the threshold and the overlap', async (t) => {
  const dir = tree(t, { 'f.md': Array.from({ length: 10 }, (_, i) => `line${i + 1}`).join('\n') })
  const ws = bm25Workspace(dir, { autoIndexPaths: ['.'], chunking: { maxChars: 20, overlapLines: 1 }, bm25: { tokenize: { preset: 'mastra' } } })
  const report = await ws.init()
  assert.ok(report.chunks > 1)
  const [hit] = await ws.search('line7', { topK: 1 })
  assert.match(hit.id, /^f\.md#chunk-\d+$/)
  assert.deepEqual(hit.lineRange, { start: 7, end: 7 })
})

test('onProgress reports scan, read and index; done never exceeds total', async (t) => {
  const files = Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`d/f${i}.md`, `file number ${i}`]))
  const dir = tree(t, files)
  const events = []
  const ws = bm25Workspace(dir, { autoIndexPaths: ['d'], onProgress: (e) => events.push(e) })
  const report = await ws.init()
  assert.equal(report.indexed, 250)
  assert.ok(events.every((e) => ['scan', 'read', 'index'].includes(e.phase) && e.done <= e.total && e.total === 250), JSON.stringify(events.slice(0, 3)))
  assert.deepEqual(new Set(events.map((e) => e.phase)), new Set(['scan', 'read', 'index']))
  assert.deepEqual(events.at(-1), { phase: 'index', done: 250, total: 250 })
  assert.ok(events.some((e) => typeof e.path === 'string' && e.path.startsWith('d/f')))
})

test('rebuildSearchIndex builds anew: deleted files disappear, index() documents are dropped', async (t) => {
  const dir = tree(t, { 'docs/a.md': 'words a', 'docs/b.md': 'words b', 'other/c.md': 'words c' })
  const ws = bm25Workspace(dir, { autoIndexPaths: ['docs'] })
  await ws.init()
  await ws.index('manual', 'words manual')
  fs.rmSync(path.join(dir, 'docs/b.md'))
  fs.writeFileSync(path.join(dir, 'docs/new.md'), 'words new')
  const report = await ws.rebuildSearchIndex()
  assert.equal(report.indexed, 2)
  assert.deepEqual(ids(await ws.search('words', { topK: 10 })).sort(), ['docs/a.md', 'docs/new.md'])
  await ws.rebuildSearchIndex(['other'])
  assert.deepEqual(ids(await ws.search('words', { topK: 10 })), ['other/c.md'])
  // An empty list keeps the index, as Mastra.
  assert.equal((await ws.rebuildSearchIndex([])).indexed, 0)
  assert.deepEqual(ids(await ws.search('words', { topK: 10 })), ['other/c.md'])
})

test('index() calls made while a rebuild runs are kept', async (t) => {
  const files = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`d/f${i}.md`, `common text ${i}`]))
  const dir = tree(t, files)
  const ws = bm25Workspace(dir, { autoIndexPaths: ['d'] })
  const [report] = await Promise.all([ws.init(), ws.index('late', 'common late'), ws.unindex('d/f1.md')])
  assert.equal(report.indexed, 300)
  const found = ids(await ws.search('common', { topK: 1000 }))
  assert.ok(found.includes('late'))
  assert.ok(!found.includes('d/f1.md'))
  assert.equal(found.length, 300)
})

test('directories deeper than Mastra\'s walk limit are reported, not silently dropped', async (t) => {
  const deep = Array.from({ length: 11 }, (_, i) => `d${i + 1}`).join('/')
  const dir = tree(t, { [`${deep}/x.md`]: 'words deep', 'd1/y.md': 'words y' })
  const { report, found } = await indexedIds(dir, ['d1'])
  assert.deepEqual(found, ['d1/y.md'])
  assert.ok(report.skipped.some((s) => /deeper than 10 levels/.test(s.reason)), JSON.stringify(report.skipped))
})

test('an entry that is a link to a folder inside basePath, or a glob through one, is walked as Mastra follows it, ids in the entry\'s form', async (t) => {
  const dir = tree(t, { 'real/a.md': 'alpha inside', 'real/sub/b.md': 'alpha sub' })
  fs.symlinkSync('real', path.join(dir, 'docs'))
  const run = async (entries) => {
    const ws = bm25Workspace(dir, { autoIndexPaths: entries })
    const report = await ws.init()
    const found = ids(await ws.search('alpha', { topK: 10 })).sort()
    await ws.destroy()
    return { found, skipped: report.skipped }
  }
  assert.deepEqual((await run(['docs'])).found, ['docs/a.md', 'docs/sub/b.md'])
  assert.deepEqual((await run(['docs/sub'])).found, ['docs/sub/b.md'])
  const glob = await run(['docs/*.md'])
  assert.deepEqual(glob.found, ['docs/a.md'])
  assert.deepEqual(glob.skipped, [])
})

test('a file named as a chunk of the file beside it (big.md#chunk-0) is reported, never taken for that chunk', async (t) => {
  const big = Array.from({ length: 400 }, (_, i) => `bigword line ${i}`).join('\n')
  const dir = tree(t, { 'big.md': big, 'big.md#chunk-0': 'otherword text', 'lone#chunk-1': 'loneword' })
  const ws = bm25Workspace(dir, { autoIndexPaths: ['.'], chunking: { maxChars: 1000 } })
  const report = await ws.init()
  assert.deepEqual(report.skipped, [{ path: 'big.md#chunk-0', reason: "named as a chunk of big.md (its id would be that chunk's)" }])
  const [first] = await ws.search('bigword line 0', { topK: 1 })
  assert.equal(first.id, 'big.md#chunk-0')
  assert.match(first.content, /^bigword line 0$/m)
  assert.deepEqual(ids(await ws.search('otherword')), [])
  assert.deepEqual(ids(await ws.search('loneword')), ['lone#chunk-1'], 'no file beside it: indexed as it is')
  await ws.destroy()
})

test('a tree hundreds of levels deep is walked one level past the limit only, and reported by ids relative to basePath', async (t) => {
  const dir = tree(t, { 'top.md': 'alpha' })
  let deep = dir
  for (let i = 0; i < 300; i++) deep = path.join(deep, 'd')
  fs.mkdirSync(deep, { recursive: true })
  fs.writeFileSync(path.join(deep, 'x.md'), 'alpha deep')
  // What lies far below the limit is never looked at (a name that is not UTF-8 would be reported).
  fs.writeFileSync(Buffer.concat([Buffer.from(path.join(dir, ...Array(20).fill('d')) + '/'), Buffer.from([0xff, 0x2e, 0x6d, 0x64])]), 'x')
  const ws = bm25Workspace(dir, { autoIndexPaths: ['.'] })
  const report = await ws.init()
  assert.deepEqual(report.skipped, [{ path: Array(10).fill('d').join('/'), reason: 'deeper than 10 levels' }])
  assert.deepEqual(ids(await ws.search('alpha')), ['top.md'])
  await ws.destroy()
})

test('an entry naming .git, the persist folder or a gitignored folder indexes nothing, also through a link', async (t) => {
  const dir = tree(t, { '.git/HEAD': 'ref: refs/heads/main', 'build/out.md': 'alpha built', 'real/a.md': 'alpha real', '.gitignore': 'build/\n' })
  fs.symlinkSync('real', path.join(dir, 'docs'))
  for (const entries of [['.git'], ['.git/*'], ['build'], ['build/*.md']]) {
    const ws = bm25Workspace(dir, { autoIndexPaths: entries })
    await ws.init()
    assert.equal(ws.stats().documents, 0, JSON.stringify(entries))
    await ws.destroy()
  }
  // The persist folder inside a folder reached through a link is not walked.
  const ws = bm25Workspace(dir, { autoIndexPaths: ['docs'], persist: { dir: path.join(dir, 'real/.wss') } })
  await ws.init()
  await ws.save()
  await ws.destroy()
  const again = bm25Workspace(dir, { autoIndexPaths: ['docs'], persist: { dir: path.join(dir, 'real/.wss') } })
  const report = await again.init()
  assert.deepEqual(report.skipped, [])
  assert.deepEqual(ids(await again.search('alpha')), ['docs/a.md'])
  await again.destroy()
})

test('a line longer than a chunk is cut between words where it can: a name across the 4,000th character is found (it was cut in two, and found by neither half)', async (t) => {
  // One line of 9,000 characters: "parseUserId" spans characters 3,997-4,007 (a cut at 4,000 splits it).
  const head = 'ab '.repeat(1331) + 'z = parseUserId(req);'
  const line = head + ' cd'.repeat((9000 - head.length) / 3)
  assert.equal(line.indexOf('parseUserId'), 3997)
  const dir = tree(t, { 'min.js': line, 'other.js': 'function other() { return 1 }' })
  const ws = bm25Workspace(dir, { autoIndexPaths: ['.'] })
  t.after(() => ws.destroy())
  await ws.init()
  const hits = await ws.search('parseUserId', { topK: 5 })
  assert.deepEqual(hits.map((h) => h.id), ['min.js#chunk-1'])
  assert.ok(hits[0].content.startsWith('parseUserId(req);'), hits[0].content.slice(0, 40))
  // The pieces are the line, in order.
  const pieces = (await ws.search('ab cd parseUserId', { topK: 10 })).sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }))
  assert.equal(pieces.length, 3)
  assert.ok(pieces.map((h) => h.content).join('') === line, 'the pieces are the line')
})

test("a worktree's or submodule's .git file is git's, never indexed (it was a document: 'gitdir: ...')", async (t) => {
  const basePath = tree(t, { '.git': 'gitdir: /elsewhere/.git/worktrees/wt\n', 'sub/.git': 'gitdir: ../.git/modules/sub\n', 'sub/a.md': 'gitdir notes\n' })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath }), bm25: true, autoIndexPaths: ['.'] })
  t.after(() => ws.destroy())
  const report = await ws.init()
  assert.equal(report.indexed, 1)
  assert.deepEqual(ids(await ws.search('gitdir', { topK: 10 })), ['sub/a.md'])
})
