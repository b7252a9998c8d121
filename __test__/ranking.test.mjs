// File-level results (group: 'file'): each file once, the chunks of a
// chunked file folded into it with every matching range; options checked.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { tree, eventually, Workspace, LocalFilesystem } from './helpers.mjs'

const { fileKind } = createRequire(import.meta.url)('../index.js')

test("group: 'file' returns each file once with all its matching ranges, best chunk first", async (t) => {
  const lines = Array.from({ length: 400 }, (_, i) => (i % 100 === 50 ? `line ${i} the heron nests here` : `line ${i} filler text`))
  const dir = tree(t, { 'src/big.md': lines.join('\n'), 'src/small.md': 'a heron once', 'src/none.md': 'nothing' })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['src'] })
  t.after(() => ws.destroy())
  await ws.init()
  const chunks = await ws.search('heron', { topK: 10 })
  assert.ok(chunks.filter((r) => r.metadata?.sourceFile === 'src/big.md').length >= 2, 'the big file is chunked')
  const files = await ws.search('heron', { topK: 10, group: 'file' })
  assert.deepEqual(files.map((r) => r.id).sort(), ['src/big.md', 'src/small.md'])
  const big = files.find((r) => r.id === 'src/big.md')
  const expected = chunks.filter((r) => r.metadata?.sourceFile === 'src/big.md').map((r) => r.lineRange).sort((a, b) => a.start - b.start)
  assert.deepEqual(big.lineRanges, expected, 'every matching chunk\'s range, in line order')
  assert.equal(big.lineRanges[0].start, 51)
  assert.ok(big.lineRanges.some((r) => r.start === big.lineRange.start))
  assert.ok(big.content.includes('heron'))
  assert.equal(files.find((r) => r.id === 'src/small.md').lineRanges.length, 1)
  assert.equal(chunks.some((r) => 'lineRanges' in r), false, 'chunk results stay as Mastra has them')
  assert.equal((await ws.search('heron', { topK: 1, group: 'file' })).length, 1)
  assert.deepEqual((await ws.search('heron', { group: 'chunk', topK: 10 })).map((r) => r.id), chunks.map((r) => r.id))
  await assert.rejects(ws.search('heron', { group: 'files' }), { name: 'TypeError', message: /group must be 'file' or 'chunk'/ })
})

test('file kinds: a generated, vendored, test or documentation file loses to the hand-written source with the same words; a question keeps the docs; the weights are an option', async (t) => {
  const words = 'parse the router table and match the route'
  const dir = tree(t, {
    'src/router.ts': `export function matchRoute() { /* ${words} */ }`,
    'dist/router.min.js': `function a(){/* ${words} */}`,
    'vendor/lib/router.go': `// ${words}`,
    'test/router.test.ts': `it('${words}')`,
    'docs/routing.md': `# Routing\n${words}`,
  })
  const open = (options = {}) => new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'], ...options })
  const ws = open()
  t.after(() => ws.destroy())
  await ws.init()
  const ranked = (await ws.search('router table route', { topK: 10, group: 'file' })).map((r) => r.id)
  assert.equal(ranked[0], 'src/router.ts')
  assert.ok(ranked.indexOf('test/router.test.ts') < ranked.indexOf('docs/routing.md'))
  assert.ok(ranked.indexOf('docs/routing.md') > 0 && ranked.indexOf('dist/router.min.js') > 0)
  // A question about usage keeps documentation at full weight.
  const question = (await ws.search('how do I match the route?', { topK: 10 })).map((r) => r.id)
  assert.ok(question.indexOf('docs/routing.md') < question.indexOf('test/router.test.ts'), question.join(' '))
  const flat = open({ fileKinds: false })
  t.after(() => flat.destroy())
  await flat.init()
  const scores = (await flat.search('router table route', { topK: 10 })).map((r) => r.scoreDetails.bm25)
  assert.ok(scores.length === 5 && Math.max(...scores) / Math.min(...scores) < 2, 'alike without weights')
  assert.throws(() => open({ fileKinds: { docs: 0 } }), { name: 'RangeError', message: /fileKinds.docs must be a weight in \(0, 1\]/ })
  assert.throws(() => open({ fileKinds: { tests: 0.5 } }), /Unknown option|tests/)
  const { fileKind } = await import('../index.js').then((m) => m.default ?? m)
  assert.deepEqual(['src/a.rs', 'README.md', 'src/a_test.go', 'Cargo.lock', 'package.json'].map(fileKind), ['source', 'docs', 'test', 'generated', 'config'])
})

test('a file path is a field: a path or its words in the query find the file first', async (t) => {
  const dir = tree(t, {
    'src/router/trie-router/router.ts': 'export class Node {\n  insert() {}\n}\n',
    'src/other/helpers.ts': 'a trie is a kind of tree; the router sends requests\n',
  })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'] })
  t.after(() => ws.destroy())
  await ws.init()
  for (const q of ['trie router', 'src/router/trie-router/router.ts', 'trieRouter']) {
    assert.equal((await ws.search(q, { topK: 2, group: 'file' }))[0].id, 'src/router/trie-router/router.ts', q)
  }
  // Line ranges stay the content's: a match by the path alone has none.
  const [byPath] = await ws.search('trie router', { topK: 1 })
  assert.equal(byPath.lineRange, undefined)
})

test('a definition ranks its file first for its name, in any of its spellings; paths and constants too', async (t) => {
  const uses = (name) => `import { ${name} } from './users'\n${name}(a)\n${name}(b)\nconst again = ${name}(c)\n`
  const dir = tree(t, {
    'src/users.ts': 'export function parseUserId(raw: string): number {\n  return Number(raw)\n}\n',
    'src/api.ts': uses('parseUserId'),
    'src/routes.ts': uses('parseUserId') + '// user id parse handling everywhere: parse the user id\n',
    'src/user_store.rs': 'pub struct UserStore {\n    id: u32,\n}\nimpl UserStore {\n    pub fn id(&self) -> u32 { self.id }\n}\n',
    'src/handlers.rs': 'fn handle(s: &UserStore) {\n    let a = s.id();\n    let b = s.id();\n    log(user.id, s.id());\n}\n',
    'src/router.ts': 'export const table = {}\n',
    'src/errors.h': '#define ERR_CODE_42 42\n#define ERR_CODE_43 43\n',
    'src/main.c': 'if (rc == ERR_CODE_42) return ERR_CODE_42;\nlog(ERR_CODE_42);\n',
    // Characters of several bytes where a definition's name is looked for.
    'src/odd.c': 'int\u00a0main(void)\n{\n}\nCopyright \u00a92019 (MIT)\ntypedef int \u00d7;\n',
  })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'] })
  t.after(() => ws.destroy())
  const report = await ws.init()
  assert.equal(report.indexed, 9, 'every file, the odd one too')
  const first = async (q) => (await ws.search(q, { topK: 3, group: 'file' }))[0]?.id
  for (const q of ['parseUserId', 'parse_user_id', 'parse user id', 'where is parseUserId defined']) assert.equal(await first(q), 'src/users.ts', q)
  assert.equal(await first('UserStore'), 'src/user_store.rs')
  assert.equal(await first('user_store'), 'src/user_store.rs')
  assert.equal(await first('src/router.ts'), 'src/router.ts')
  assert.equal(await first('ERR_CODE_42'), 'src/errors.h')
  // Line ranges stay the content's: the definition's line.
  const [hit] = await ws.search('parseUserId', { topK: 1 })
  assert.deepEqual(hit.lineRange, { start: 1, end: 1 })
})

test('a whole identifier finds the file that defines it over files that use it, and its words, more often', async (t) => {
  const helpers = (name) => Array.from({ length: 60 }, (_, i) => `export function ${name}${i}(value: string): string { return value.trim() + '${i}' }`).join('\n')
  const caller = 'import { parseUserId } from "./users"\n' + Array.from({ length: 12 }, (_, i) => `const id${i} = parseUserId(req.params.user${i}) // parse the user id`).join('\n')
  const dir = tree(t, {
    // A long file: its definition is one line among many.
    'src/users.ts': `${helpers('helper')}\nexport function parseUserId(raw: string): number {\n  return Number(raw)\n}\n${helpers('other')}\n`,
    'src/api.ts': caller,
    'src/routes.ts': caller,
    'src/admin.ts': caller,
  })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['src'] })
  t.after(() => ws.destroy())
  await ws.init()
  for (const q of ['parseUserId', 'parse_user_id', 'where is ParseUserID defined']) {
    const [first, second] = await ws.search(q, { topK: 4, group: 'file' })
    assert.equal(first.id, 'src/users.ts', q)
    assert.ok(second.score < 0.8, `${q}: the callers fall well behind (${second.score})`)
  }
  // As plain words it is no identifier: the callers, which hold them most, lead.
  assert.notEqual((await ws.search('parse user id', { topK: 1, group: 'file' }))[0].id, 'src/users.ts')
  // A JavaScript tokenizer's index has no whole identifiers: the query's words alone, callers first.
  const js = new Workspace({
    filesystem: new LocalFilesystem({ basePath: dir }),
    autoIndexPaths: ['src'],
    bm25: { tokenize: { tokenizer: (text) => text.split(/[^A-Za-z0-9_]+/).filter(Boolean) } },
  })
  t.after(() => js.destroy())
  await js.init()
  const [jsFirst] = await js.search('parseUserId', { topK: 1, group: 'file' })
  assert.notEqual(jsFirst.id, 'src/users.ts')
})

test(".gitattributes linguist rules override what a path says, and follow the file's edits under watch", async (t) => {
  const words = 'decode the frame header and check the frame length'
  const dir = tree(t, {
    'src/frame.c': `/* ${words} */`,
    'src/frame_tables.c': `/* ${words} */`,
    'vendor/lib/frame.c': `/* ${words} */`,
  })
  // The .c files in their order (the .gitattributes file has the words too).
  const rank = async (ws) => (await ws.search('decode frame header', { topK: 5, group: 'file' })).map((r) => r.id).filter((id) => id.endsWith('.c'))
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'], watch: true, persist: { dir: `${dir}-persist` } })
  t.after(async () => {
    await ws.destroy()
    fs.rmSync(`${dir}-persist`, { recursive: true, force: true })
  })
  await ws.init()
  assert.equal((await rank(ws)).at(-1), 'vendor/lib/frame.c', 'vendored by its path')
  fs.writeFileSync(path.join(dir, '.gitattributes'), 'src/frame_tables.c linguist-generated\nvendor/** -linguist-vendored\n')
  await eventually('the generated file last, the vendored one hand-written', async () => (await rank(ws)).at(-1) === 'src/frame_tables.c')
  const ranked = await rank(ws)
  assert.equal(ranked.length, 3)
  // A fresh workspace reads the rules at init() too.
  const cold = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'] })
  t.after(() => cold.destroy())
  await cold.init()
  assert.equal((await rank(cold)).at(-1), 'src/frame_tables.c')
})

test('.gitattributes: rules past the first 10,000, and a file over 1 MiB, are not applied and are reported in skipped (they cost rules x files, and were dropped silently)', async (t) => {
  const files = { 'src/invoice.ts': 'export function invoiceTotal() {}\n', 'gen/invoice.ts': 'export function invoiceTotal() {}\n' }
  const many = Array.from({ length: 10_002 }, (_, i) => `other${i}/** linguist-generated`).join('\n')
  for (const [attributes, why] of [
    [`gen/** linguist-generated\n${many}\n`, /^unreadable: 3 linguist rules are not applied \(past the first 10000, or too large a set of globs\)$/],
    [`gen/** linguist-generated\n${'#'.repeat(1 << 20)}\n`, /^unreadable: its linguist rules are not applied: \d+ bytes, over 1048576$/],
  ]) {
    const dir = tree(t, { ...files, '.gitattributes': attributes })
    const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['src', 'gen'] })
    const report = await ws.init()
    const noted = report.skipped.filter((s) => s.path === '.gitattributes')
    assert.equal(noted.length, 1, JSON.stringify(report.skipped))
    assert.match(noted[0].reason, why)
    const scores = Object.fromEntries((await ws.search('invoiceTotal')).map((r) => [r.id, r.score]))
    if (attributes.length < 1 << 20) assert.ok(scores['gen/invoice.ts'] < scores['src/invoice.ts'], 'the first rules are applied')
    await ws.destroy()
  }
})

test('an absolute autoIndexPaths entry ranks as its relative spelling: kinds, path words and .gitattributes read from basePath down', async (t) => {
  const words = 'decode the frame header and check the frame length'
  const root = tree(t, {
    'vendor/tests/proj/src/frame.c': `/* ${words} */`,
    'vendor/tests/proj/src/frame_tables.c': `/* ${words} */`,
    'vendor/tests/proj/lib/frame.c': `/* ${words} */`,
    'vendor/tests/proj/guide.md': `# Guide\n${words}`,
    'vendor/tests/proj/.gitattributes': 'src/frame_tables.c linguist-generated\n',
  })
  // basePath lies under folders named as vendored and test code are: none of them is the files' own.
  const base = path.join(root, 'vendor/tests/proj')
  const run = async (entries, options = {}) => {
    const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: entries, ...options })
    t.after(() => ws.destroy())
    await ws.init()
    const out = []
    for (const q of ['decode frame header', 'frame tables', 'vendor tests proj']) {
      const hits = await ws.search(q, { topK: 10, group: 'file' })
      out.push(hits.map((r) => [r.id.replace(`${base}/`, ''), r.score, r.scoreDetails]))
    }
    return out
  }
  const relative = await run(['src', 'lib', 'guide.md'])
  assert.deepEqual(relative[0].slice(0, 2).map((r) => r[0]).sort(), ['lib/frame.c', 'src/frame.c'], 'hand-written source first')
  assert.ok(relative[1][0][0] === 'src/frame_tables.c' && relative[1][0][1] === 1 && relative[1][1][1] < 0.6, 'the path field: frame_tables')
  assert.ok(relative[0][2][1] < 0.3, 'generated (by .gitattributes) and documentation far below')
  assert.deepEqual(relative[2], [], "basePath's own folders are no words of its files")
  const spellings = [
    [`${base}/src`, `${base}/lib`, `${base}/guide.md`],
    [`${base}/src/`, `${base}/lib/`, `${base}/guide.md`],
    ['tests/../src', 'x/./../lib', './guide.md'],
    [`${base}/tests/../src`, `${root}/vendor/x/../tests/proj/lib`, `${base}/./guide.md`],
    [base],
  ]
  for (const entries of spellings) {
    const scored = await run(entries)
    if (entries.length === 1) {
      assert.deepEqual(scored, await run(['.']), 'the whole of basePath')
    } else {
      // (Files of equal scores in id order: the spellings' ids sort otherwise.)
      const tiesById = (hits) => [...hits].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      const plain = scored.map((hits) => tiesById(hits.map(([id, ...rest]) => [id.replace(/^.*?(src|lib)\//, '$1/').replace(/^.*guide\.md$/, 'guide.md'), ...rest])))
      assert.deepEqual(plain, relative.map(tiesById), entries[0])
    }
  }
  assert.deepEqual([fileKind('x/../docs/a.ts'), fileKind('docs/../src/a.ts'), fileKind('./test/./a.ts')], ['docs', 'source', 'test'])
  // Saved and loaded again: the same.
  const persist = { dir: `${root}/persist` }
  const saved = await run([`${base}/src`, `${base}/lib`, `${base}/guide.md`], { persist })
  assert.deepEqual(saved, relative)
  assert.deepEqual(await run([`${base}/src`, `${base}/lib`, `${base}/guide.md`], { persist }), relative, 'loaded from the snapshot')
  // A snapshot of absolute entries made before (basePath's folders in its path words) is rebuilt:
  // their fingerprint says how paths are read; relative entries' snapshots are left as they are.
  const opened = async (entries) => {
    const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: entries, persist: { dir: `${root}/persist2` } })
    t.after(() => ws.destroy())
    const report = await ws.init()
    await ws.destroy()
    return report.warnings
  }
  assert.deepEqual(await opened(['src']), [])
  assert.deepEqual(await opened(['src']), [])
  // Documents given to index() under basePath's spelling, loaded from a snapshot with nothing to walk:
  // read from basePath down too (the loaded index had lost basePath: they counted as tests).
  const records = async () => {
    const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: [], persist: { dir: `${root}/persist3` } })
    t.after(() => ws.destroy())
    await ws.init()
    await ws.index(`${base}/src/c.ts`, 'gizmo')
    await ws.index('src/d.ts', 'gizmo')
    const scores = (await ws.search('gizmo', { topK: 5 })).map((r) => [r.id.replace(`${base}/`, ''), r.scoreDetails.bm25])
    await ws.destroy()
    return scores
  }
  const first = await records()
  assert.equal(first[0][1], first[1][1], 'the same weight for both spellings')
  assert.deepEqual(await records(), first, 'after loading the snapshot')
  assert.match((await opened([`${base}/src`]))[0] ?? '', /built with other options.*paths from basePath down/)
})

test("in a git work tree, a task that names most of a file's name ranks that file over one with more of its other words; elsewhere scores stay Mastra's", async (t) => {
  // tokenizer.ts holds more of the task's words; tree_builder.ts is named by it.
  const files = {
    'src/tokenizer.ts': 'export function read() { /* handle the stack of elements when closing a tag */ }',
    'src/tree_builder.ts': 'export function insert(node) { /* push the node on the stack */ }',
  }
  for (const n of ['parser', 'render', 'config', 'cache', 'router', 'events']) files[`src/${n}.ts`] = `export function ${n}() { /* the ${n} of the page */ }`
  const dir = tree(t, files)
  const git = (...args) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd: dir, stdio: 'pipe' })
  git('init', '-q')
  git('add', '.')
  git('commit', '-qm', 'Add the sources')
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['src'] })
  t.after(() => ws.destroy())
  await ws.init()
  const task = "Fix the tree builder's stack handling when closing elements"
  const found = await ws.search(task, { topK: 2, group: 'file' })
  assert.deepEqual(found.map((r) => r.id), ['src/tree_builder.ts', 'src/tokenizer.ts'])
  assert.ok(found[0].scoreDetails.bm25 < found[1].scoreDetails.bm25, 'the content alone ranks the other first')
  // Outside a git work tree (records, a plain folder): the best match's share, as Mastra's.
  const records = new Workspace({ bm25: true })
  t.after(() => records.destroy())
  await records.init()
  await records.indexMany(Object.entries(files).map(([path, content]) => ({ path, content })))
  const plain = await records.search(task, { topK: 2 })
  assert.equal(plain[0].id, 'src/tokenizer.ts')
  assert.equal(plain[1].score, plain[1].scoreDetails.bm25 / plain[0].scoreDetails.bm25)
})

test('a query of hundreds of thousands of identifiers is answered, the defining file first, file and chunk results alike', { timeout: 60_000 }, async (t) => {
  const dir = tree(t, { 'src/users.ts': 'export function parseUserId(raw: string) {}\n', 'src/api.ts': 'parseUserId(a)\n' })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['src'] })
  t.after(() => ws.destroy())
  await ws.init()
  // 200,000 distinct identifiers (about 3 MB), the defined one among them; a
  // check of each against all before it would take minutes here.
  const query = Array.from({ length: 200_000 }, (_, i) => (i === 100_000 ? 'parseUserId' : `someName${i}Value`)).join(' ')
  const [first] = await ws.search(query, { topK: 2, group: 'file' })
  assert.equal(first.id, 'src/users.ts')
  const [chunk] = await ws.search(query, { topK: 1, mode: 'bm25', minScore: 0 })
  assert.equal(chunk.id, 'src/users.ts')
})

test("group: 'file' lists every matching chunk's range whatever topK is", async (t) => {
  const lines = Array.from({ length: 1000 }, (_, i) => (i % 6 === 0 ? `needle at line ${i + 1}` : `filler ${i}`))
  const dir = tree(t, { 'big.md': lines.join('\n'), 'small.md': 'needle here too' })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'], chunking: { maxChars: 100, overlapLines: 0 } })
  await ws.init()
  const counts = []
  for (const topK of [1, 2, 5, 100]) {
    const [first] = await ws.search('needle', { topK, group: 'file' })
    assert.equal(first.id, 'big.md')
    counts.push(first.lineRanges.length)
  }
  assert.ok(counts[0] > 100, `${counts}`)
  assert.deepEqual(new Set(counts).size, 1, `the same ranges at every topK: ${counts}`)
  await ws.destroy()
})

test('pathPrefix names a folder (or a file): src holds src/a.md, not srcs/b.md; . is everything', async () => {
  const ws = new Workspace({ bm25: true })
  await ws.indexMany([
    { path: 'deep/a.md', content: 'apple' },
    { path: 'deep-notes.md', content: 'apple' },
    { path: 'deeper/b.md', content: 'apple' },
    { path: 'top.md', content: 'apple' },
  ])
  const under = async (pathPrefix) => (await ws.search('apple', { topK: 10, pathPrefix })).map((r) => r.id).sort()
  for (const p of ['deep', './deep', '/deep', 'deep/']) assert.deepEqual(await under(p), ['deep/a.md'], p)
  for (const p of ['.', './', '/', '']) assert.deepEqual(await under(p), ['deep-notes.md', 'deep/a.md', 'deeper/b.md', 'top.md'], p)
  assert.deepEqual(await under('top.md'), ['top.md'])
  await ws.index('deep#draft.md', 'apple')
  assert.deepEqual(await under('deep'), ['deep/a.md'], 'a # that starts no chunk suffix is another name')
  await ws.destroy()
})

test("a user's own metadata.sourceFile does not make a document a chunk of another file", async () => {
  const ws = new Workspace({ bm25: true })
  await ws.index('notes/a.md', 'apple pie', { metadata: { sourceFile: 'other.md' } })
  await ws.index('other.md', 'apple tart')
  const grouped = (await ws.search('apple', { topK: 10, group: 'file' })).map((r) => r.id).sort()
  assert.deepEqual(grouped, ['notes/a.md', 'other.md'])
  assert.deepEqual((await ws.search('apple', { pathPrefix: 'notes/' })).map((r) => r.id), ['notes/a.md'])
  await ws.destroy()
})
