// workspace-search/mastra: Mastra's own Workspace with the native engine,
// given to a real Mastra Agent driven by MockLanguageModelV3, with skills,
// a non-local filesystem, and a Mastra of the wrong shape.
import test from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import os from 'node:os'
import { Agent } from '@mastra/core/agent'
import * as mastra from '@mastra/core/workspace'
import * as ours from 'workspace-search/mastra'
import { tree, ids, eventually, Workspace, EmbedderError, VectorStoreError } from './helpers.mjs'
import { scriptedModel, call } from './mock-model.mjs'

const require = createRequire(import.meta.url)
const { NativeSearchEngine } = require('../lib/mastra/engine.js')
const { createWorkspaceClass, FORWARDED_OPTIONS } = require('../lib/mastra/workspace.js')

const FILES = {
  'docs/重置.md': '帮助\n如何重置密码：打开设置，点击重置密码\n',
  'docs/router.md': 'Router setup guide\nPlug the router in\n',
}

test('the entry exports what @mastra/core/workspace exports, its Workspace a subclass of Mastra’s', () => {
  const names = [...Object.keys(mastra), 'lastIndexReport', 'nativeWorkspace'].sort()
  assert.deepEqual(Object.keys(ours).sort(), names)
  assert.deepEqual(Object.keys(require('workspace-search/mastra')).sort(), names)
  assert.notEqual(ours.Workspace, mastra.Workspace)
  assert.equal(ours.LocalFilesystem, mastra.LocalFilesystem)
  const ws = new ours.Workspace({ filesystem: new mastra.LocalFilesystem({ basePath: '.' }), bm25: true })
  assert.ok(ws instanceof mastra.Workspace)
  assert.ok(ws._searchEngine instanceof NativeSearchEngine)
  assert.equal(ws.canBM25, true)
  assert.equal(ws.canVector, false)
  // Without search configured nothing is swapped, as Mastra.
  assert.equal(new ours.Workspace({ filesystem: new mastra.LocalFilesystem({ basePath: '.' }) })._searchEngine, undefined)
})

test('init() indexes natively; Chinese found where Mastra’s own engine finds nothing', async (t) => {
  const basePath = tree(t, FILES)
  const config = () => ({ filesystem: new mastra.LocalFilesystem({ basePath }), bm25: true, autoIndexPaths: ['docs'] })
  const native = new ours.Workspace(config())
  await native.init()
  assert.equal(native.status, 'ready')
  assert.equal(ours.lastIndexReport(native).indexed, 2)
  assert.deepEqual(ids(await native.search('重置密码')), ['docs/重置.md'])
  const theirs = new mastra.Workspace(config())
  await theirs.init()
  assert.deepEqual(ids(await theirs.search('重置密码')), [])
  assert.deepEqual(ids(await theirs.search('router')), ['docs/router.md'])
  await native.destroy()
  assert.equal(native.status, 'destroyed')
  await assert.rejects(native.index('x', 'y'), { name: 'WorkspaceNotReadyError' })
})

test('persist and watch through Mastra’s Workspace: the next instance reuses the saved index, changes reach it', async (t) => {
  const basePath = tree(t, FILES)
  const past = new Date(Date.now() - 3600_000)
  for (const f of Object.keys(FILES)) fs.utimesSync(`${basePath}/${f}`, past, past)
  const dir = fs.mkdtempSync(`${os.tmpdir()}/wss-mastra-persist-`)
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const config = () => ({ filesystem: new mastra.LocalFilesystem({ basePath }), bm25: true, autoIndexPaths: ['docs'], persist: { dir }, watch: true })
  const first = new ours.Workspace(config())
  await first.init()
  assert.equal(ours.lastIndexReport(first).reread, 2)
  await first.destroy()
  const second = new ours.Workspace(config())
  await second.init()
  // Mastra's teardown clears its search engine: that must not reach the saved index,
  // and destroy() gives the directory up for the next workspace.
  const { reused, reread, warnings } = ours.lastIndexReport(second)
  assert.deepEqual([reused, reread, warnings], [2, 0, []])
  assert.deepEqual(ids(await second.search('重置密码')), ['docs/重置.md'])
  fs.writeFileSync(`${basePath}/docs/new.md`, 'a router manual, second edition')
  const deadline = Date.now() + 10_000
  while (!ids(await second.search('edition')).includes('docs/new.md')) {
    assert.ok(Date.now() < deadline, 'the watcher brought the new file within 10 s')
    await new Promise((r) => setTimeout(r, 25))
  }
  await second.destroy()
})

const text = (output) => (typeof output?.value === 'string' ? output.value : JSON.stringify(output))

test('new Agent({ workspace }): native search, Mastra’s file tools, a write then a search', async (t) => {
  const basePath = tree(t, FILES)
  const workspace = new ours.Workspace({ filesystem: new mastra.LocalFilesystem({ basePath }), bm25: true, autoIndexPaths: ['docs'] })
  await workspace.init()
  const { model, results } = scriptedModel([
    [call('s1', 'mastra_workspace_search', { query: '重置密码' })],
    [call('r1', 'mastra_workspace_read_file', { path: 'docs/router.md' })],
    [
      call('w1', 'mastra_workspace_write_file', { path: 'docs/k8s.md', content: 'Kubernetes ingress notes\n' }),
      call('i1', 'mastra_workspace_index', { path: 'docs/k8s.md', content: 'Kubernetes ingress notes\n' }),
    ],
    [call('s2', 'mastra_workspace_search', { query: 'kubernetes ingress' })],
  ])
  const agent = new Agent({ id: 'helper', name: 'helper', instructions: 'Use the workspace.', model, workspace })
  const out = await agent.generate('Find how to reset a password, read the router guide, note ingress.', { maxSteps: 8 })
  assert.equal(out.text, 'done')
  assert.match(text(results.s1), /docs\/重置\.md/)
  assert.match(text(results.r1), /Router setup guide/)
  assert.match(text(results.s2), /docs\/k8s\.md/)
  const fs = await import('node:fs')
  assert.equal(fs.readFileSync(`${basePath}/docs/k8s.md`, 'utf8'), 'Kubernetes ingress notes\n')
  await workspace.destroy()
})

test('skills are searched by the native engine', async (t) => {
  const basePath = tree(t, {
    ...FILES,
    'skills/brand/SKILL.md': '---\nname: brand\ndescription: 品牌指南 brand guidelines\n---\n\n# 品牌\n\n品牌颜色是深蓝色。\n',
    'skills/deploy/SKILL.md': '---\nname: deploy\ndescription: How to deploy\n---\n\n# Deploy\n\nRun the release pipeline.\n',
  })
  const workspace = new ours.Workspace({ filesystem: new mastra.LocalFilesystem({ basePath }), bm25: true, skills: ['skills'] })
  await workspace.init()
  const found = await workspace.skills.search('品牌颜色')
  assert.deepEqual(found.map((r) => r.skillName), ['brand'])
  assert.equal(workspace._searchEngine.countByPrefix('skill:'), 2)
  // Mastra's own engine does not find it (no CJK tokenization).
  const theirs = new mastra.Workspace({ filesystem: new mastra.LocalFilesystem({ basePath }), bm25: true, skills: ['skills'] })
  await theirs.init()
  assert.deepEqual(await theirs.skills.search('品牌颜色'), [])
  await workspace.destroy()
})

test("the caller's topK and minScore are checked before Mastra adds to them: skills.search and a search beside ids under skill-scope: (Mastra took -1 or 1.5 for a valid engine value)", async (t) => {
  const basePath = tree(t, {
    ...FILES,
    'skills/s1/SKILL.md': '---\nname: s1\ndescription: password one\n---\n\npassword body\n',
    'skills/s2/SKILL.md': '---\nname: s2\ndescription: password two\n---\n\npassword body\n',
  })
  const workspace = new ours.Workspace({ filesystem: new mastra.LocalFilesystem({ basePath }), bm25: true, autoIndexPaths: ['docs'], skills: ['skills'] })
  t.after(() => workspace.destroy())
  await workspace.init()
  await workspace.index('skill-scope:n1', 'unrelated')
  await workspace.index('skill-scope:n2', 'unrelated')
  for (const [options, message] of [
    [{ topK: -1 }, /^topK must be an integer >= 0, got -1$/],
    [{ topK: 1.5 }, /^topK must be an integer >= 0, got 1.5$/],
    [{ topK: Infinity }, /^topK must be a finite number/],
    [{ topK: '3' }, /^topK must be a number/],
    [{ minScore: 1.5 }, /^minScore must be between 0 and 1, got 1.5$/],
  ]) {
    await assert.rejects(workspace.skills.search('password', options), { message }, `skills.search ${JSON.stringify(options)}`)
    await assert.rejects(workspace.search('password', options), { message }, `search ${JSON.stringify(options)}`)
  }
  assert.equal((await workspace.skills.search('password', { topK: 1 })).length, 1)
  assert.ok((await workspace.search('reset', { topK: 1 })).length <= 1)
})

test('a filesystem that is not a LocalFilesystem is read through Mastra and indexed natively', async (t) => {
  const basePath = tree(t, FILES)
  const workspace = new ours.Workspace({ mounts: { '/data': new mastra.LocalFilesystem({ basePath }) }, bm25: true, autoIndexPaths: ['/data/docs'] })
  await workspace.init()
  assert.equal(ours.lastIndexReport(workspace), undefined)
  assert.deepEqual(ids(await workspace.search('重置密码')), ['/data/docs/重置.md'])
  await workspace.destroy()
})

test('a Mastra whose Workspace is shaped otherwise fails at construction', () => {
  class Elsewhere {
    constructor() {
      this.engine = {}
    }
    rebuildSearchIndex() {}
  }
  const Bad = createWorkspaceClass({ Workspace: Elsewhere, LocalFilesystem: class {}, WorkspaceError: mastra.WorkspaceError }, '9.0.0')
  assert.throws(() => new Bad({ bm25: true }), (err) => {
    assert.ok(err instanceof mastra.WorkspaceError)
    assert.equal(err.code, 'UNSUPPORTED_MASTRA')
    assert.match(err.message, /supports @mastra\/core >=1\.71\.0 <2; the installed @mastra\/core 9\.0\.0 does not keep its search engine/)
    return true
  })
  class HalfEngine {
    constructor() {
      this._searchEngine = { search() {} }
    }
    rebuildSearchIndex() {}
  }
  const Half = createWorkspaceClass({ Workspace: HalfEngine, LocalFilesystem: class {} }, '1.99.0')
  assert.throws(() => new Half({ bm25: true }), /a search engine without index, indexMany, remove, countByPrefix, removeByPrefix, removeSource, clear/)
  assert.throws(() => createWorkspaceClass({}, '3.0.0'), /has no Workspace class/)
})

test('every option of the native Workspace reaches it through Mastra’s config (timeouts, chunking, ...)', { timeout: 30_000 }, async (t) => {
  // The declared options (binding.d.ts) are the ones the addon accepts
  // (options-drift.test.mjs); each is forwarded but the two Mastra's own
  // workspace supplies.
  const dts = fs.readFileSync(new URL('../binding.d.ts', import.meta.url), 'utf8')
  const body = dts.match(/export interface WorkspaceOptions \{\n([\s\S]*?)\n\}/)[1]
  const [native, mastraOnly] = body.split("/** Options of Mastra's Workspace that do not concern search")
  assert.ok(mastraOnly, 'the declaration keeps Mastra-only options last')
  const declared = [...native.matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1])
  assert.deepEqual(declared.filter((k) => !FORWARDED_OPTIONS.includes(k)).sort(), ['filesystem', 'id'])
  // And they take effect: a vector store whose query never answers fails the
  // search after vectorStoreTimeoutMs, an embedder that never answers after
  // embedTimeoutMs (both 2 minutes by default).
  const held = new Map()
  let hangStore = false
  let hangEmbedder = false
  const never = () => new Promise(() => {})
  const vectorStore = {
    async createIndex() {},
    async upsert({ ids, vectors }) {
      ids.forEach((id, i) => held.set(id, vectors[i]))
    },
    async query({ topK }) {
      if (hangStore) return never()
      return [...held.keys()].slice(0, topK).map((id) => ({ id, score: 1, metadata: {} }))
    },
  }
  const embedder = async (text) => (hangEmbedder ? never() : [text.length % 7, 1, 0])
  const filesystem = new mastra.LocalFilesystem({ basePath: tree(t, FILES) })
  const workspace = new ours.Workspace({ filesystem, bm25: true, vectorStore, embedder, vectorStoreTimeoutMs: 1000, embedTimeoutMs: 1000 })
  await workspace.index('doc', 'the document about routers')
  hangStore = true
  // Classes Mastra has none of pass through the entry as they are.
  await assert.rejects(workspace.search('routers', { mode: 'vector' }), (e) => e instanceof VectorStoreError && e.message === 'vectorStore.query did not answer within 1000 ms.')
  hangStore = false
  hangEmbedder = true
  await assert.rejects(workspace.search('routers', { mode: 'vector' }), (e) => e instanceof EmbedderError && e.code === 'EMBEDDER' && e.message === 'Embedder did not answer within 1000 ms (query).')
  await workspace.destroy()
})

test('an empty id, which Mastra takes, is taken here too: with search and for grep alone', async (t) => {
  const basePath = tree(t, FILES)
  const searching = new ours.Workspace({ id: '', filesystem: new mastra.LocalFilesystem({ basePath }), bm25: true, autoIndexPaths: ['docs'] })
  t.after(() => searching.destroy())
  await searching.init()
  assert.deepEqual(ids(await searching.search('router')), ['docs/router.md'])
  const grepOnly = new ours.Workspace({ id: '', filesystem: new mastra.LocalFilesystem({ basePath }) })
  t.after(() => grepOnly.destroy())
  await grepOnly.init()
  assert.equal(typeof grepOnly.filesystem.grep, 'function')
})

test('tenantPool measures workspace-search/mastra workspaces without a memoryOf (Mastra\'s class has no stats(): every get() failed), and says what to give for one it cannot measure', async (t) => {
  const { tenantPool } = require('../index.js')
  const base = tree(t, FILES)
  const pool = tenantPool({
    maxBytes: 1 << 30,
    attach: async (tenant) => {
      const ws = new ours.Workspace({ id: tenant, filesystem: new ours.LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['docs'] })
      await ws.init()
      return ws
    },
  })
  t.after(() => pool.close())
  const ws = await pool.get('a')
  assert.deepEqual((await ws.search('router', { topK: 1 })).map((r) => r.id), ['docs/router.md'])
  assert.deepEqual(pool.tenants(), ['a'])
  // One without search (grep alone) is measured through its native workspace too: its grep index.
  const grepOnly = tenantPool({ maxBytes: 1 << 30, attach: async () => new ours.Workspace({ filesystem: new ours.LocalFilesystem({ basePath: base }) }) })
  t.after(() => grepOnly.close())
  const hourAgo = new Date(Date.now() - 3600_000) // (files changed in the last 2 s are not indexed by grep)
  for (const rel of Object.keys(FILES)) fs.utimesSync(`${base}/${rel}`, hourAgo, hourAgo)
  const g = await grepOnly.get('g')
  await ours.nativeWorkspace(g).grep('Router')
  await eventually('its grep index is built', () => ours.nativeWorkspace(g).stats().grep?.files > 0)
  await grepOnly.touched('g')
  assert.ok(grepOnly.memoryBytes() > 0, 'its grep index counts')
  const stock = tenantPool({ maxBytes: 1 << 30, attach: async () => new mastra.Workspace({ filesystem: new mastra.LocalFilesystem({ basePath: base }) }) })
  t.after(() => stock.close())
  await assert.rejects(stock.get('b'), /has no stats\(\).*give memoryOf/)
})

test('the entry rejects with the classes it exports (Mastra\'s): a search after destroy() is its WorkspaceNotReadyError, a bad search configuration its WorkspaceError (they were the root entry\'s, which its imports did not catch)', async (t) => {
  const root = require('../index.js')
  const base = tree(t, FILES)
  const ws = new ours.Workspace({ filesystem: new ours.LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['docs'] })
  await ws.init()
  await ws.destroy()
  const cut = await ws.search('router').then(() => undefined, (e) => e)
  assert.ok(cut instanceof ours.WorkspaceNotReadyError, cut?.constructor?.name)
  assert.equal(cut.code, 'NOT_READY')
  assert.ok(cut.cause instanceof root.WorkspaceNotReadyError, 'the native error is its cause')
  const indexed = await ws.index('a', 'b').then(() => undefined, (e) => e)
  assert.ok(indexed instanceof ours.WorkspaceNotReadyError, 'index() after destroy() the same class')
  assert.throws(
    () => new ours.Workspace({ filesystem: new ours.LocalFilesystem({ basePath: base }), bm25: true, embedder: async () => [1], searchIndexName: 'bad-name!' }),
    (e) => e instanceof ours.WorkspaceError && e.code === 'INVALID_SEARCH_CONFIG',
  )
  // What the user's embedder threw passes as it is, an error of another workspace included.
  const other = new root.WorkspaceNotReadyError('another-workspace', 'destroyed')
  const embedding = new ours.Workspace({ id: 'mine', filesystem: new ours.LocalFilesystem({ basePath: base }), bm25: true, embedder: async () => { throw other } })
  t.after(() => embedding.destroy())
  await assert.rejects(embedding.index('a', 'alpha'), (e) => e === other)
})

test('a splitPattern splits as in Mastra: JavaScript\'s \\s (U+FEFF), ASCII \\w, \\d and \\b, [^], line feeds (Rust\'s Unicode classes split otherwise); a string where it occurs', async () => {
  const cases = [
    [/\s+/, 'alpha\ufeffbeta gamma', 'beta'],
    [/\W+/, 'café crème', 'caf'],
    [/\d/, 'x\u0663y zz', 'x'],
    [/\b/, 'ab-é', '-é'],
    [/[^]x/, 'abxcd', 'cd'],
    [/\n/, 'one two\nthree', 'three'],
    [/a.b/s, 'qa\nbr', 'br'],
    [/[^\p{L}\p{N}]+/u, 'hello, world! café', 'world'],
    [/\P{L}+/u, 'alpha1beta', 'beta'],
    // A string splits where it occurs (String.prototype.split), not as a RegExp's source.
    ['.', 'alpha.beta gamma', 'alpha', { removePunctuation: false }],
    ['|', 'alpha|beta', 'alpha', { removePunctuation: false }],
    ['\\s', 'alpha\\sbeta', 'beta', { removePunctuation: false }],
    ['*', 'alpha*beta', 'alpha', { removePunctuation: false }],
    ['(', 'alpha(beta', 'beta', { removePunctuation: false }],
  ]
  for (const [splitPattern, doc, query, extra = {}] of cases) {
    const tokenize = { splitPattern, minLength: 1, ...extra }
    const theirs = new mastra.Workspace({ filesystem: new mastra.LocalFilesystem({ basePath: os.tmpdir() }), bm25: { tokenize } })
    const native = new ours.Workspace({ filesystem: new mastra.LocalFilesystem({ basePath: os.tmpdir() }), bm25: { tokenize: { preset: 'mastra', ...tokenize } } })
    const found = []
    for (const ws of [theirs, native]) {
      await ws.index('d', doc)
      await ws.index('other', 'zzz')
      found.push(ids(await ws.search(query)))
    }
    assert.deepEqual(found[1], found[0], `${splitPattern} over ${JSON.stringify(doc)}, for ${query}`)
    await native.destroy()
  }
})

test("the search engine's removeSource and clear as Mastra's: chunk ids given to index() go with their source; a count or a search right after the synchronous clear() sees nothing it cleared", async (t) => {
  const basePath = tree(t, { 'docs/a.md': 'x\n' })
  const answers = {}
  for (const [name, W] of [['mastra', mastra.Workspace], ['ours', ours.Workspace]]) {
    const ws = new W({ filesystem: new mastra.LocalFilesystem({ basePath }), bm25: true })
    t.after(() => ws.destroy())
    await ws.index('docs/b.md#chunk-0', 'common zero')
    await ws.index('docs/b.md#chunk-1', 'common one')
    await ws.index('docs/b.md#chunked', 'common kept')
    await ws._searchEngine.removeSource('docs/b.md')
    const removed = [ws._searchEngine.countByPrefix('docs/b.md'), ids(await ws.search('common'))]
    await ws.index('notes/a.md', 'common alpha')
    const before = ws._searchEngine.countByPrefix('notes/')
    ws._searchEngine.clear()
    const cleared = [before, ws._searchEngine.countByPrefix('notes/'), ws._searchEngine.countByPrefix('docs/')]
    // A search right after the clear (Mastra's is synchronous) never sees what it cleared.
    const searched = []
    for (let i = 0; i < 30; i++) {
      await ws.index('notes/b.md', 'common beta')
      ws._searchEngine.clear()
      searched.push(...ids(await ws.search('common')))
    }
    cleared.push(searched)
    await ws.index('notes/c.md', 'common gamma')
    answers[name] = { removed, cleared, after: [ws._searchEngine.countByPrefix('notes/'), ids(await ws.search('common'))] }
  }
  assert.deepEqual(answers.ours, answers.mastra)
  assert.deepEqual(answers.ours.removed, [1, ['docs/b.md#chunked']])
  assert.deepEqual(answers.ours.cleared, [1, 0, 0, []])
})

/** Each pattern as an autoIndexPaths entry indexes the same ids here as in Mastra (and some, unless `someFound` is false). */
async function sameGlobMatches(t, basePath, patterns, { someFound = true } = {}) {
  for (const pattern of patterns) {
    const found = {}
    for (const [name, W] of [['mastra', mastra.Workspace], ['ours', ours.Workspace]]) {
      const ws = new W({ filesystem: new mastra.LocalFilesystem({ basePath }), bm25: true, autoIndexPaths: [pattern] })
      t.after(() => ws.destroy())
      await ws.init()
      found[name] = ids(await ws.search('words', { topK: 100 })).sort()
    }
    assert.deepEqual(found.ours, found.mastra, pattern)
    if (someFound) assert.ok(found.ours.length > 0, pattern)
  }
}

test('autoIndexPaths globs whose dot segment has a wildcard (docs/.*, .h*) find the dot-files Mastra finds (they found none)', async (t) => {
  const basePath = tree(t, {
    'docs/.h.md': 'words h', 'docs/.hdir/e.md': 'words e', '.env.md': 'words env', 'docs/a.md': 'words a',
    'a/.y': 'words y', '.vscode/.x': 'words x', '.vscode/b/.z': 'words z', 'c/.w/v.md': 'words v',
  })
  await sameGlobMatches(t, basePath, ['docs/.*', 'docs/.h*', 'docs/.*.md', '.*', 'docs/*', '**/.*', '.vscode/**/.*', '*/.w/*.md', '**/*.md'])
})

test('autoIndexPaths globs meet characters, not bytes: ? and classes match ü and 日 as Mastra does (they matched one byte: docs/?.md missed docs/ü.md)', async (t) => {
  const basePath = tree(t, {
    'docs/ü.md': 'words u', 'docs/é.md': 'words e', 'docs/a.md': 'words a', 'docs/ab.md': 'words ab',
    'docs/日本.md': 'words ja', 'über/ß.md': 'words sz', 'uber/x.md': 'words x',
  })
  await sameGlobMatches(t, basePath, ['docs/?.md', 'docs/??.md', 'docs/[éü].md', 'docs/[!ü].md', 'docs/[à-ü].md', 'über/*.md', '**/?.md'])
  const ws = new Workspace({ filesystem: new mastra.LocalFilesystem({ basePath }), bm25: true })
  t.after(() => ws.destroy())
  const greped = await ws.grep('words', { path: 'docs/?.md' })
  assert.deepEqual(greped.map((f) => f.path).sort(), ['docs/a.md', 'docs/é.md', 'docs/ü.md'])
})

test('autoIndexPaths globs read braces, folders and literal names as Mastra (picomatch) does: ranges, empty alternatives, one-item braces, `x/**` naming the folder (its dot-files indexed), a file named as the glob, `/**` ids', async (t) => {
  const basePath = tree(t, {
    'docs/a.md': 'words a', 'docs/b.md': 'words b', 'docs/c.md': 'words c', 'docs/ab.md': 'words ab', 'docs/{a,b}.md': 'words literal',
    'docs/[x].md': 'words bracket', 'docs/x.md': 'words x', 'docs/sub/x.md': 'words sub', 'docs/sub/.h.md': 'words hidden', 'a.md': 'words top',
    'docs/B.md': 'words B', 'docs/_.md': 'words _', 'v/v0.md': 'words v0', 'v/v1.md': 'words v1', 'v/v2.md': 'words v2', 'v/v10.md': 'words v10', 'v/v-1.md': 'words v-1',
  })
  const ranges = ['docs/{a..c}.md', 'docs/{a..B}.md', 'v/v{1..10}.md', 'v/v{-1..1}.md', 'v/v{2..0}.md']
  await sameGlobMatches(t, basePath, [...ranges, 'docs/{,a}b.md', 'docs/*.{md}', 'docs/{a,b}.md', 'docs/[x].md', '**/sub/**', '/**/*.md'], { someFound: false })
})

test("an autoIndexPaths entry in the LocalFilesystem's allowedPaths, outside basePath, is indexed as Mastra indexes it (it was 'not found'); watch where there is no folder of ours to watch says so", async (t) => {
  const basePath = tree(t, { 'docs/a.md': 'alpha guide\n' })
  const outside = tree(t, { 'ext/e.md': 'router external\n' })
  const found = {}
  for (const [name, W] of [['mastra', mastra.Workspace], ['ours', ours.Workspace]]) {
    const ws = new W({ filesystem: new mastra.LocalFilesystem({ basePath, allowedPaths: [outside] }), bm25: true, autoIndexPaths: [`${outside}/ext`, 'docs'] })
    t.after(() => ws.destroy())
    await ws.init()
    found[name] = [ids(await ws.search('router')), ids(await ws.search('alpha'))]
  }
  assert.deepEqual(found.ours, found.mastra)
  assert.deepEqual(found.ours[0], [`${outside}/ext/e.md`])
  // Not contained: Mastra's filesystem API reads the files, no watcher of ours follows them.
  const warned = new Promise((resolve) => process.once('warning', resolve))
  const loose = new ours.Workspace({ filesystem: new mastra.LocalFilesystem({ basePath, contained: false }), bm25: true, watch: true, autoIndexPaths: ['docs'] })
  t.after(() => loose.destroy())
  assert.equal((await warned).code, 'WORKSPACE_SEARCH_WATCH_IGNORED')
  const standalone = new Workspace({ bm25: true, watch: true, autoIndexPaths: ['docs'] })
  t.after(() => standalone.destroy())
  assert.match((await standalone.init()).warnings.join('\n'), /watch: no folder to watch/)
})

test('persist through Mastra’s Workspace without autoIndexPaths, or with files read through Mastra’s API (mounts): init() loads and saves the index (nothing was loaded or saved, and the mounts indexed nothing)', async (t) => {
  const basePath = tree(t, FILES)
  const dir = tree(t)
  const bare = () => new ours.Workspace({ id: 'w', filesystem: new mastra.LocalFilesystem({ basePath }), bm25: true, persist: { dir } })
  const first = bare()
  await first.init()
  await first.index('notes/x.md', 'kiwi note')
  await first.destroy()
  assert.ok(fs.readdirSync(dir).includes('snapshot.wss'))
  const second = bare()
  await second.init()
  assert.deepEqual(ids(await second.search('kiwi')), ['notes/x.md'])
  await second.destroy()

  const mounted = new ours.Workspace({ id: 'm', mounts: { '/m': new mastra.LocalFilesystem({ basePath }) }, bm25: true, autoIndexPaths: ['/m/docs'], persist: { dir: tree(t) } })
  await mounted.init()
  assert.deepEqual(ids(await mounted.search('router')), ['/m/docs/router.md'])
  await mounted.destroy()
})

test('two overlapping destroy() calls through Mastra’s Workspace save the index once, whole (the second cleared it under the first’s save)', async (t) => {
  const basePath = tree(t, FILES)
  const dir = tree(t)
  const config = () => ({ id: 'w', filesystem: new mastra.LocalFilesystem({ basePath }), bm25: true, autoIndexPaths: ['docs'], persist: { dir } })
  const first = new ours.Workspace(config())
  await first.init()
  await first.index('notes/m.md', 'kiwi')
  await Promise.all([first.destroy(), first.destroy()])
  const second = new ours.Workspace(config())
  await second.init()
  assert.deepEqual(ids(await second.search('kiwi')), ['notes/m.md'])
  assert.deepEqual(ids(await second.search('router')), ['docs/router.md'])
  await second.destroy()
})

test('persisted skills: a skill deleted between runs is no longer found by search (its document stayed in the snapshot)', async (t) => {
  const basePath = tree(t, { ...FILES, 'skills/brand/SKILL.md': '---\nname: brand\ndescription: brand guidelines\n---\n\nBrand colour is deep blue kiwi.\n' })
  const dir = tree(t)
  const config = () => ({ id: 'w', filesystem: new mastra.LocalFilesystem({ basePath }), bm25: true, autoIndexPaths: ['docs'], skills: ['skills'], persist: { dir } })
  const first = new ours.Workspace(config())
  await first.init()
  assert.equal((await first.skills.list()).length, 1)
  assert.equal((await first.search('kiwi')).length, 1)
  await first.destroy()
  fs.rmSync(`${basePath}/skills/brand`, { recursive: true })
  const second = new ours.Workspace(config())
  await second.init()
  assert.deepEqual(await second.skills.list(), [])
  assert.deepEqual(ids(await second.search('kiwi')), [])
  assert.deepEqual(ids(await second.search('router')), ['docs/router.md'])
  await second.destroy()
})

test('skill_search checks topK with a filesystem resolver too (the scoped skills it asks for were not checked)', async (t) => {
  const basePath = tree(t, { 'skills/s1/SKILL.md': '---\nname: s1\ndescription: password one\n---\n\npassword body\n' })
  const filesystem = new mastra.LocalFilesystem({ basePath })
  const workspace = new ours.Workspace({ filesystem: () => filesystem, bm25: true, skills: ['skills'] })
  t.after(() => workspace.destroy())
  await workspace.init()
  const { model, results } = scriptedModel([[call('a', 'skill_search', { query: 'password', topK: -1 }), call('b', 'skill_search', { query: 'password', topK: 1.5 })]])
  const agent = new Agent({ id: 'a', name: 'a', instructions: 'x', model, workspace })
  await agent.generate('go', { maxSteps: 3 })
  assert.match(text(results.a), /topK must be an integer >= 0, got -1/)
  assert.match(text(results.b), /topK must be an integer >= 0, got 1.5/)
})

test('watch with an autoIndexPaths entry outside basePath (allowedPaths) warns WORKSPACE_SEARCH_WATCH_IGNORED (nothing was followed, without a word)', async (t) => {
  const outside = tree(t, { 'ext/o.md': 'kiwi outside\n' })
  const basePath = tree(t, FILES)
  const warned = []
  const onWarning = (w) => warned.push(w.code)
  process.on('warning', onWarning)
  t.after(() => process.off('warning', onWarning))
  const workspace = new ours.Workspace({ filesystem: new mastra.LocalFilesystem({ basePath, allowedPaths: [outside] }), bm25: true, watch: true, autoIndexPaths: ['docs', `${outside}/ext`] })
  t.after(() => workspace.destroy())
  await workspace.init()
  await new Promise((r) => setImmediate(r))
  assert.ok(warned.includes('WORKSPACE_SEARCH_WATCH_IGNORED'), JSON.stringify(warned))
  assert.deepEqual(ids(await workspace.search('kiwi')), [`${outside}/ext/o.md`])
})

test('persisted, a document of the user’s own whose id starts with skill: stays across restarts in a workspace without skills (only Mastra’s skills’ documents are dropped at init())', async (t) => {
  const basePath = tree(t, FILES)
  const dir = tree(t)
  const open = () => new ours.Workspace({ id: 'w', filesystem: new mastra.LocalFilesystem({ basePath }), bm25: true, persist: { dir } })
  const first = open()
  await first.init()
  await first.index('skill:my-own-note', 'kiwi note of mine')
  await first.destroy()
  const second = open()
  await second.init()
  assert.deepEqual(ids(await second.search('kiwi')), ['skill:my-own-note'])
  await second.destroy()
})
