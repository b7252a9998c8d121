// Git history as a ranking signal (gitHistory): the messages of the commits
// that touched a file lift it among the files the query found; read again
// when HEAD moves; no repository, a broken one, or the option off: plain
// BM25. Real repositories made with the git command line.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { tree, eventually, Workspace, LocalFilesystem, toolPages } from './helpers.mjs'

const git = (dir, ...args) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd: dir, stdio: 'pipe' })
const open = (dir, options = {}) =>
  new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'], ...options })
const top = async (ws, q) => (await ws.search(q, { topK: 5, group: 'file' })).map((r) => r.id)

/** A repository whose reader's fix matches "overflow tokenizer"; its files under `folder` (`we\\ird/`). */
function repo(t, folder = '') {
  const dir = tree(t, { [`${folder}src/lexer.rs`]: 'fn lex() { parser parser }', [`${folder}src/reader.rs`]: 'fn read() { parser }' })
  git(dir, 'init', '-q')
  git(dir, 'add', '.')
  git(dir, 'commit', '-qm', 'Add the lexer and the reader')
  fs.writeFileSync(path.join(dir, `${folder}src/reader.rs`), 'fn read() { parser; }')
  git(dir, 'commit', '-qam', 'Fix an overflow in the tokenizer when input ends early')
  return dir
}

test('the history counts for files found through an absolute autoIndexPaths entry (their ids start with basePath: none matched its history)', async (t) => {
  const dir = repo(t)
  for (const paths of [['src'], [path.join(dir, 'src')], [`${dir}/src/`]]) {
    const ws = open(dir, { autoIndexPaths: paths })
    t.after(() => ws.destroy())
    await ws.init()
    const found = (await top(ws, 'parser overflow tokenizer')).map((id) => id.replace(`${dir}/`, ''))
    assert.deepEqual(found, ['src/reader.rs', 'src/lexer.rs'], paths[0])
  }
})

test('a file whose past commits match the query ranks first among the files found; off, plain BM25', async (t) => {
  const dir = repo(t)
  const ws = open(dir)
  const off = open(dir, { gitHistory: false })
  t.after(() => Promise.all([ws.destroy(), off.destroy()]))
  await Promise.all([ws.init(), off.init()])
  assert.deepEqual(await top(off, 'parser overflow tokenizer'), ['src/lexer.rs', 'src/reader.rs'])
  assert.deepEqual(await top(ws, 'parser overflow tokenizer'), ['src/reader.rs', 'src/lexer.rs'])
  const chunks = await ws.search('parser overflow tokenizer', { topK: 5 })
  assert.equal(chunks[0].id, 'src/reader.rs', 'chunk results too')
  assert.equal(chunks[0].score, 1)
  assert.deepEqual(await top(ws, 'overflow'), [], 'history never brings in a file the query does not find')
  const head = git(dir, 'rev-parse', 'HEAD').toString().trim()
  // The first commit is left out (it would name every file): the reader's fix alone.
  assert.deepEqual(ws.stats().history, { head, files: 1, memoryBytes: ws.stats().history.memoryBytes })
  assert.ok(ws.stats().history.memoryBytes > 0)
  assert.equal(off.stats().history, undefined)
})

test('a new commit moves the ranking without init(): HEAD is checked when searched, at most every 2 s', async (t) => {
  const dir = repo(t)
  const ws = open(dir)
  t.after(() => ws.destroy())
  await ws.init()
  assert.equal((await top(ws, 'parser overflow tokenizer'))[0], 'src/reader.rs')
  fs.writeFileSync(path.join(dir, 'src/lexer.rs'), 'fn lex() { parser parser; }')
  git(dir, 'commit', '-qam', 'Tokenizer: overflow checks, overflow tests, tokenizer limits')
  const head = git(dir, 'rev-parse', 'HEAD').toString().trim()
  await eventually('the lexer first after its commit', async () => (await top(ws, 'parser overflow tokenizer'))[0] === 'src/lexer.rs')
  assert.equal(ws.stats().history.head, head)
  git(dir, 'checkout', '-q', 'HEAD~1')
  await eventually('the reader first again on the older commit', async () => (await top(ws, 'parser overflow tokenizer'))[0] === 'src/reader.rs')
})

test('no repository, a broken .git, an empty repository: BM25 alone, no error', async (t) => {
  const plain = tree(t, { 'a.rs': 'parser' })
  const broken = tree(t, { 'a.rs': 'parser', '.git': 'gitdir: /nonexistent/place\n' })
  const empty = tree(t, { 'a.rs': 'parser' })
  git(empty, 'init', '-q')
  const garbled = repo(t)
  for (const f of fs.readdirSync(path.join(garbled, '.git/objects'))) {
    if (/^[0-9a-f]{2}$/.test(f)) fs.rmSync(path.join(garbled, '.git/objects', f), { recursive: true })
  }
  for (const dir of [plain, broken, empty, garbled]) {
    const ws = open(dir)
    t.after(() => ws.destroy())
    const report = await ws.init()
    assert.ok(report.indexed >= 1)
    assert.ok((await top(ws, 'parser')).length >= 1, dir)
    assert.equal(ws.stats().history?.files ?? 0, 0, dir)
  }
  assert.throws(() => open(plain, { gitHistory: 'yes' }), { name: 'TypeError', message: /gitHistory/ })
})

test('a shallow clone: the boundary commit names every file, so it is left out (no history rather than the same for all)', async (t) => {
  const origin = repo(t)
  for (let i = 0; i < 3; i++) {
    fs.writeFileSync(path.join(origin, `src/extra${i}.rs`), `fn extra${i}() { parser }`)
    git(origin, 'add', '.')
    git(origin, 'commit', '-qm', `Add extra ${i}`)
  }
  const shallow = fs.mkdtempSync(path.join(path.dirname(origin), 'shallow-'))
  t.after(() => fs.rmSync(shallow, { recursive: true, force: true }))
  git(path.dirname(shallow), 'clone', '-q', '--depth', '1', `file://${origin}`, shallow)
  const ws = open(shallow)
  const off = open(shallow, { gitHistory: false })
  t.after(() => Promise.all([ws.destroy(), off.destroy()]))
  await Promise.all([ws.init(), off.init()])
  assert.equal(ws.stats().history?.files ?? 0, 0)
  assert.deepEqual(await top(ws, 'parser extra'), await top(off, 'parser extra'))
})

test('with history, every topK and every page of the search tool are cut from one ranking (a pool that grew with topK re-ordered the first results: pages overlapped, files were never shown)', async (t) => {
  // 500 files holding the word 1-13 times; commits name it for one file in seven.
  const files = {}
  for (let i = 0; i < 500; i++) files[`src/m${i}.txt`] = `${'kaft '.repeat(1 + ((i * 7919) % 13))}filler ${i}\n`
  const dir = tree(t, files)
  git(dir, 'init', '-q')
  git(dir, 'add', '.')
  git(dir, 'commit', '-qm', 'Start')
  for (let i = 0; i < 500; i += 7) {
    fs.appendFileSync(path.join(dir, `src/m${i}.txt`), 'more\n')
    git(dir, 'commit', '-qam', `Fix kaft handling in m${i}`)
  }
  const ws = open(dir)
  t.after(() => ws.destroy())
  await ws.init()
  for (const group of [undefined, 'file']) {
    const all = (await ws.search('kaft', { topK: 500, group })).map((r) => r.id)
    assert.equal(all.length, 500)
    for (const topK of [10, 26, 51, 101, 153, 250]) {
      assert.deepEqual((await ws.search('kaft', { topK, group })).map((r) => r.id), all.slice(0, topK), `${group} topK ${topK}`)
    }
  }
  // The tool's pages (topK skip + 51 each) partition the file ranking.
  const shown = await toolPages(ws, 'kaft')
  assert.deepEqual(shown, (await ws.search('kaft', { topK: 500, group: 'file' })).map((r) => r.id))
})

test('rebuildSearchIndex() during a search\'s background history read answers with HEAD as it is now (it returned with the history the read began at)', async (t) => {
  const dir = tree(t, { 'src/lexer.rs': 'fn lex() { parser }', 'src/reader.rs': 'fn read() { parser parser }' })
  git(dir, 'init', '-q')
  // 3,000 commits over 60 files (git fast-import): a read takes long enough to be under way below.
  let stream = ''
  for (let i = 0; i < 3000; i++) {
    const body = `fn f${i}() {}\n`
    stream += `commit refs/heads/main\ncommitter t <t@t> ${1_600_000_000 + i} +0000\ndata <<EOM\nTouch module ${i % 60} number ${i}\nEOM\n`
    stream += `M 644 inline src/gen/m${i % 60}.rs\ndata ${Buffer.byteLength(body)}\n${body}\n`
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: dir, input: stream })
  git(dir, 'symbolic-ref', 'HEAD', 'refs/heads/main')
  git(dir, 'add', 'src/lexer.rs', 'src/reader.rs')
  git(dir, 'commit', '-qm', 'Add the lexer and the reader')
  const ws = open(dir, { autoIndexPaths: ['src/lexer.rs', 'src/reader.rs'] })
  t.after(() => ws.destroy())
  await ws.init()
  assert.deepEqual(await top(ws, 'parser zeppelin'), ['src/reader.rs', 'src/lexer.rs'])
  for (let round = 0; round < 3; round++) {
    fs.appendFileSync(path.join(dir, 'src/lexer.rs'), '\n')
    git(dir, 'commit', '-qam', `Lexer round ${round}`)
    // Past the 2 s between checks, a search starts a background read of this HEAD...
    await new Promise((resolve) => setTimeout(resolve, 2100))
    await top(ws, 'parser')
    // ...and a commit lands while it reads.
    fs.appendFileSync(path.join(dir, 'src/lexer.rs'), '\n')
    git(dir, 'commit', '-qam', `Zeppelin: the lexer's zeppelin mode ${round}`)
    await ws.rebuildSearchIndex()
    assert.equal(ws.stats().history.head, git(dir, 'rev-parse', 'HEAD').toString().trim(), `round ${round}`)
    assert.deepEqual(await top(ws, 'parser zeppelin'), ['src/lexer.rs', 'src/reader.rs'], `round ${round}`)
    git(dir, 'reset', '-q', '--hard', 'HEAD~2')
    await ws.rebuildSearchIndex()
  }
})

test('without autoIndexPaths, documents from index() (as Mastra\'s index tool gives them, by path) are ranked by their files\' history (it was never read)', async (t) => {
  const dir = repo(t)
  const ws = open(dir, { autoIndexPaths: undefined })
  t.after(() => ws.destroy())
  await ws.init()
  await ws.index('src/lexer.rs', 'fn lex() { parser parser }')
  await ws.index('src/reader.rs', 'fn read() { parser; }')
  // Read in the background: init() has no files to read beside it.
  await eventually('the history read', () => ws.stats().history?.files === 1)
  assert.deepEqual(await top(ws, 'parser overflow tokenizer'), ['src/reader.rs', 'src/lexer.rs'])
})

test('a commit whose committer line gitoxide cannot read (a date that is no number, an ident without <>) is passed by, as git log passes it: the older history stays (the walk stopped there)', async (t) => {
  for (const who of ['t <t@t> yesterday +0000', 't t@t 1700000000 +0000']) {
    const dir = repo(t)
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'x')
    git(dir, 'add', 'notes.txt')
    const body = `tree ${git(dir, 'write-tree').toString().trim()}\nparent ${git(dir, 'rev-parse', 'HEAD').toString().trim()}\nauthor ${who}\ncommitter ${who}\n\nImported notes\n`
    const odd = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--literally', '--stdin'], { cwd: dir, input: body }).toString().trim()
    git(dir, 'update-ref', 'HEAD', odd)
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'y')
    git(dir, 'commit', '-qam', 'More notes')
    const ws = open(dir)
    t.after(() => ws.destroy())
    await ws.init()
    assert.deepEqual(await top(ws, 'parser overflow tokenizer'), ['src/reader.rs', 'src/lexer.rs'], who)
    assert.equal(ws.stats().history.files, 2, who)
  }
})

test('a basePath whose folder name holds a backslash (a plain character on Unix) has its history (it had none: the prefix was read as we/ird)', { skip: process.platform === 'win32' }, async (t) => {
  const root = repo(t, 'we\\ird/')
  const ws = open(path.join(root, 'we\\ird'))
  t.after(() => ws.destroy())
  await ws.init()
  assert.equal(ws.stats().history.files, 1)
  assert.deepEqual(await top(ws, 'parser overflow tokenizer'), ['src/reader.rs', 'src/lexer.rs'])
})
