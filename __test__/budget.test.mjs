// The token budget of the agent-facing search (lib/budget.js), through the
// search tool of createWorkspaceTools and the MCP server's workspace_search
// (the SDK's own client over stdio): the answer never exceeds maxTokens
// (tokenx's estimate, as Mastra's), reaches many files, pages with a cursor
// without overlap, and a session does not see the same lines twice unless
// it asks (repeat: true).
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import test from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { estimateTokenCount } from 'tokenx'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { Workspace, LocalFilesystem, lib, tree } from './helpers.mjs'

const { createWorkspaceTools } = lib
const CLI = fileURLToPath(new URL('../bin/workspace-search.js', import.meta.url))

async function connect(t, dir) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', dir, '--no-persist'], stderr: 'pipe' })
  const client = new Client({ name: 'test-client', version: '1.0.0' })
  await client.connect(transport)
  t.after(() => client.close())
  /** The tool's text for these arguments (a tool error fails the test unless `error` is set). */
  return async (args, { error = false } = {}) => {
    const result = await client.callTool({ name: 'workspace_search', arguments: args })
    assert.equal(Boolean(result.isError), error, result.content[0].text)
    return result.content.map((c) => c.text).join('\n')
  }
}

async function toolsOver(dir, options) {
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'] })
  await ws.init()
  const search = createWorkspaceTools(ws, options).mastra_workspace_search
  return { ws, call: (args) => search.execute(args) }
}

/** The files an answer shows: its header lines (`path:start-end  score`, `(shown before)` ones too). */
const headers = (text) => [...text.matchAll(/^(\S+?):\d+-\d+ {2}\d\.\d{3}/gm)].map((m) => m[1])
const cursorOf = (text) => /cursor "([^"]+)"\]$/.exec(text)?.[1]

/** Files that test the budget's edges: many long files, CJK lines, one enormous line. */
function hardFiles() {
  const files = {}
  for (let f = 0; f < 12; f++) files[`big/huge${f}.txt`] = Array.from({ length: 3000 }, (_, i) => `alpha beta gamma delta line ${i} of file ${f}`).join('\n')
  const cjk = '这是一个很长的中文句子用来测试令牌预算是否成立'.repeat(20)
  for (let f = 0; f < 6; f++) files[`cjk/文档${f}.md`] = Array.from({ length: 40 }, (_, i) => `${cjk.slice(0, 200 + i)}重置密码${cjk}`).join('\n')
  files['min/bundle.js'] = `${'var a=1;'.repeat(25_000)}function findMeHere(){}${'var b=2;'.repeat(25_000)}`
  files['min/wide.txt'] = `${'word '.repeat(40_000)}findMeHere ${'word '.repeat(40_000)}\nsecond findMeHere line\n`
  for (let i = 0; i < 60; i++) files[`many/m${i}.md`] = `alpha note ${i}\nand more, ${i} times\n`
  files['min/mid.txt'] = `${'word '.repeat(300)}findMeHere ${'word '.repeat(300)}\n`
  return files
}

test('the answer never exceeds maxTokens: huge files, CJK text, very long lines (tools instance)', async (t) => {
  const { call } = await toolsOver(tree(t, hardFiles()))
  for (const query of ['alpha gamma line', '重置密码', 'findMeHere', 'alpha 重置密码 findMeHere']) {
    for (const maxTokens of [100, 137, 400, 2000, 6000]) {
      const out = await call({ query, maxTokens, repeat: true })
      const tokens = estimateTokenCount(out)
      assert.ok(tokens <= maxTokens, `${query} / ${maxTokens}: ${tokens} tokens\n${out}`)
      assert.ok(headers(out).length >= 1, out)
      assert.match(out, /\[(no more results|(stopped at maxTokens \d+ after \d+ files?|50 files shown, the page is full \(at most 50 files a page\)); next page: the same call with cursor "[^"]+")\]$/)
    }
  }
  // A line too long for the budget is cut around its match, which stays.
  const long = await call({ query: 'findMeHere', maxTokens: 6000, repeat: true })
  assert.match(long, /^min\/bundle\.js:\d+-\d+ {2}\d\.\d{3}\n\d+:.*findMeHere.*…$/m)
  assert.match(long, /^min\/mid\.txt:1-1 {2}\d\.\d{3}\n1:….* findMeHere word .*…$/m)
  for (const line of long.split('\n')) assert.ok(estimateTokenCount(line) <= 45, line)
  // The default budget is 2,000 tokens.
  const byDefault = await call({ query: 'alpha 重置密码 findMeHere', repeat: true })
  assert.equal(byDefault, await call({ query: 'alpha 重置密码 findMeHere', maxTokens: 2000, repeat: true }))
  assert.match(byDefault, /\[stopped at maxTokens 2000 after \d+ files; next page/)
})

test('the answer never exceeds maxTokens (MCP)', async (t) => {
  const search = await connect(t, tree(t, hardFiles()))
  for (const query of ['alpha gamma line', '重置密码', 'findMeHere']) {
    for (const maxTokens of [100, 2000]) {
      const out = await search({ query, maxTokens, repeat: true })
      assert.ok(estimateTokenCount(out) <= maxTokens, `${query} / ${maxTokens}: ${estimateTokenCount(out)}\n${out}`)
      assert.ok(headers(out).length >= 1, out)
    }
  }
  const cjk = await search({ query: '重置密码', repeat: true })
  assert.match(cjk, /^\d+:….*重置密码.*…$/m)
})

test('the budget reaches many files: matching lines per file are capped and the remaining budget is shared', async (t) => {
  const { call } = await toolsOver(tree(t, hardFiles()))
  const out = await call({ query: 'alpha gamma line', maxTokens: 2000 })
  const files = headers(out)
  assert.ok(files.length >= 10, `${files.length} files\n${out}`)
  // At most 4 matching lines chosen, each with a line of context each side (which may match too).
  for (const block of out.split('\n\n').filter((b) => b.startsWith('big/'))) {
    const lines = block.split('\n').slice(1)
    assert.ok(lines.length >= 1 && lines.length <= 12, block)
  }
  // The best file gets at least as many lines as the last one shown.
  const blocks = out.split('\n\n').filter((b) => /^\S+:\d+-\d+ {2}/.test(b))
  assert.ok(blocks[0].split('\n').length >= blocks.at(-1).split('\n').length, out)
})

test('neighbouring matches share their context: each line once, in order, "n:" a match, "n-" context', async (t) => {
  const dir = tree(t, { 'a.md': 'intro\nfoo one\nfoo two\nmiddle\nplain\nplain\nplain\nfoo three\nend\n' })
  const { call } = await toolsOver(dir)
  assert.equal(await call({ query: 'foo' }), 'a.md:2-8  1.000\n1-intro\n2:foo one\n3:foo two\n4-middle\n7-plain\n8:foo three\n9-end\n\n[no more results]')
})

/** Pages through a search with `call`, returning every page's text. */
async function pages(call, args) {
  const out = []
  let cursor
  for (let i = 0; i < 100; i++) {
    const text = await call({ ...args, ...(cursor ? { cursor } : {}) })
    out.push(text)
    cursor = cursorOf(text)
    if (!cursor) return out
  }
  throw new Error('no end')
}

function routerNotes() {
  const files = {}
  for (let i = 0; i < 40; i++) files[`notes/n${String(i).padStart(2, '0')}.md`] = `note ${i} about routers\n${'and switches '.repeat(i % 5)}routers again\n`
  return files
}

test('a cursor pages through every file once, without overlap, and the last page says there is no more (tools, MCP)', async (t) => {
  const dir = tree(t, routerNotes())
  const { ws, call } = await toolsOver(dir)
  const all = (await ws.search('routers', { topK: 100, group: 'file' })).map((r) => r.id).sort()
  assert.equal(all.length, 40)
  const mcp = await connect(t, dir)
  for (const [name, fn] of [['tools', call], ['mcp', mcp]]) {
    for (const args of [{ query: 'routers', maxTokens: 150 }, { query: 'routers', maxTokens: 2000, topK: 7 }]) {
      const texts = await pages(fn, args)
      assert.ok(texts.length > 1, `${name}: one page`)
      const seen = texts.flatMap(headers)
      assert.deepEqual([...seen].sort(), all, `${name} ${JSON.stringify(args)}: every file once`)
      for (const text of texts) assert.ok(estimateTokenCount(text) <= args.maxTokens, text)
      assert.match(texts.at(-1), /\n\n\[no more results\]$/)
      if (args.topK) assert.match(texts[0], /\[7 files shown, the page is full \(topK\); next page: the same call with cursor "[^"]+"\]$/)
      else assert.match(texts[0], /\[stopped at maxTokens 150 after \d+ files?; next page: the same call with cursor "[^"]+"\]$/)
    }
  }
  // A cursor belongs to its search.
  const first = await call({ query: 'routers', maxTokens: 150 })
  await assert.rejects(call({ query: 'switches', maxTokens: 150, cursor: cursorOf(first) }), { message: /cursor belongs to another search/ })
  // The budget may change between pages; topK may not.
  assert.ok(headers(await call({ query: 'routers', maxTokens: 3000, cursor: cursorOf(first), repeat: true })).length > 1)
  await assert.rejects(call({ query: 'routers', topK: 3, cursor: cursorOf(first) }), { message: /cursor belongs to another search/ })
  const mcpError = await mcp({ query: 'switches', cursor: cursorOf(first) }, { error: true })
  assert.match(mcpError, /^cursor belongs to another search/)
})

test('within a session, lines shown before are one line, new lines still show; repeat: true shows them again (MCP)', async (t) => {
  const dir = tree(t, { 'src/auth.ts': 'export function resetPassword(user) {\n  sendMail(user)\n}\n\n\n\n\nexport function login(user) {\n  check(user)\n}\n', 'docs/guide.md': 'How to reset a password and login\n' })
  const search = await connect(t, dir)
  const first = await search({ query: 'reset password' })
  assert.match(first, /^src\/auth\.ts:1-1 {2}1\.000\n1:export function resetPassword\(user\) \{\n2- {2}sendMail\(user\)$/m)
  const again = await search({ query: 'reset password' })
  assert.match(again, /^src\/auth\.ts:1-1 {2}1\.000 {2}\(shown before\)$/m)
  assert.match(again, /^docs\/guide\.md:1-1 {2}\d\.\d{3} {2}\(shown before\)$/m)
  assert.ok(!again.includes('resetPassword'), again)
  // Another query on the same files: only what was not shown, with a note of what was.
  const other = await search({ query: 'login user' })
  assert.match(other, /^src\/auth\.ts:\d+-\d+ {2}\d\.\d{3} {2}\(also shown before: 1-2\)\n8:export function login\(user\) \{/m)
  const repeated = await search({ query: 'reset password', repeat: true })
  assert.equal(repeated, first)
  // A new session (a new server) has no memory.
  const fresh = await connect(t, dir)
  assert.equal(await fresh({ query: 'reset password' }), first)
})

test('the tools instance remembers what it showed; a changed line shows again; memory lasts 20 calls', async () => {
  const ws = new Workspace({ bm25: true })
  await ws.index('a.md', 'alpha first\nfiller\nalpha second\n')
  await ws.index('b.md', 'alpha only here\n')
  const tools = createWorkspaceTools(ws)
  const call = (args) => tools.mastra_workspace_search.execute(args)
  const first = await call({ query: 'alpha' })
  assert.ok(first.includes('1:alpha first'), first)
  assert.match(await call({ query: 'alpha' }), /^a\.md:1-3 {2}1\.000 {2}\(shown before\)\n\nb\.md:1-1 {2}0\.\d{3} {2}\(shown before\)\n\n\[no more results\]$/)
  assert.equal(await call({ query: 'alpha', repeat: true }), first)
  // Another instance has its own memory.
  assert.equal(await createWorkspaceTools(ws).mastra_workspace_search.execute({ query: 'alpha' }), first)
  // An edited document: its changed line is new.
  await ws.index('b.md', 'alpha changed here\n')
  assert.match(await call({ query: 'alpha' }), /^b\.md:1-1 {2}\d\.\d{3}\n1:alpha changed here$/m)
  // Twenty calls later the memory has let go.
  assert.match(await call({ query: 'alpha' }), /^a\.md:1-3 {2}1\.000 {2}\(shown before\)$/m)
  for (let i = 0; i < 20; i++) await call({ query: 'zebra' })
  assert.equal(await call({ query: 'alpha' }), await createWorkspaceTools(ws).mastra_workspace_search.execute({ query: 'alpha' }))
  // A file with many matches: once its best lines were shown, it is one line, not its next-best lines.
  await ws.index('c.md', Array.from({ length: 50 }, (_, i) => `gamma ${i}`).join('\n'))
  assert.match(await call({ query: 'gamma' }), /^c\.md:1-50 {2}1\.000\n1:gamma 0\n2:gamma 1\n3:gamma 2\n4:gamma 3\n5:gamma 4\n\n\[no more results\]$/)
  assert.match(await call({ query: 'gamma' }), /^c\.md:\d+-\d+ {2}1\.000 {2}\(shown before\)\n\n\[no more results\]$/)
})

test('paging always moves on: a file shown before whose one-line note does not fit still takes its place (the page had 0 files and a cursor to itself); a new line that does not fit is not passed off as "shown before"; a file with no line holding the query shows no lines (they were numbered from 1)', async () => {
  const pages = async (call, args) => {
    const out = []
    let cursor
    for (let k = 0; k < 20; k++) {
      const page = await call({ ...args, cursor })
      out.push(page)
      const next = /cursor "([^"]+)"\]$/.exec(page)?.[1]
      if (!next) return out
      assert.notEqual(next, cursor, `a cursor to the same page:\n${page}`)
      cursor = next
    }
    assert.fail('paging did not end')
  }
  // A long path, shown once: its "(shown before)" note is wider than a small page.
  const one = new Workspace({ bm25: true })
  const longId = Array.from({ length: 14 }, (_, i) => `目录${i}😀/`).join('') + 'file.md'
  await one.index(longId, 'alpha here\n')
  const search = createWorkspaceTools(one).mastra_workspace_search
  await search.execute({ query: 'alpha', maxTokens: 2000 })
  const again = await pages((a) => search.execute(a), { query: 'alpha', maxTokens: 100 })
  assert.ok(again.every((p) => estimateTokenCount(p) <= 100))
  assert.match(again[0], /\(shown before\)|…/)
  await one.destroy()
  // A file seen before gets a new line too long for what is left: it starts the next page, the line shown there.
  const two = new Workspace({ bm25: true })
  await two.index('f.md', 'alpha beta\n')
  const tool = createWorkspaceTools(two).mastra_workspace_search
  await tool.execute({ query: 'alpha beta' })
  await two.index('f.md', 'alpha beta\n\nalpha beta ' + 'new information the agent has never seen '.repeat(3) + '\n')
  await two.index('x.md', Array.from({ length: 6 }, (_, i) => `alpha beta alpha beta line ${i} with words words words words`).join('\n') + '\n')
  const all = (await pages((a) => tool.execute(a), { query: 'alpha beta', maxTokens: 100 })).join('\n')
  assert.match(all, /new information the agent has never seen/, 'the new line is shown on some page')
  await two.destroy()
  // Found by its name alone: no line of the best chunk holds the query, and its place in the file is unknown.
  const three = new Workspace({ bm25: true })
  await three.index('installation.md', Array.from({ length: 400 }, (_, i) => `step ${i}: configure the widget number ${i}`).join('\n') + '\n')
  const [hit] = await three.search('installation', { topK: 1, group: 'file' })
  const page = await createWorkspaceTools(three).mastra_workspace_search.execute({ query: 'installation', maxTokens: 400 })
  if (hit && !hit.lineRange) assert.doesNotMatch(page, /^\d+[-:]step/m, page)
  await three.destroy()
})

test('the search tool never numbers lines it cannot place: with a tokenizer of the user\'s own, the lines its tokens match (it showed "5:The passwords", line 1; then no lines)', async (t) => {
  const text = 'The passwords are stored here\nline two\nline three\nline four\nreset them with the tool'
  const ws = new Workspace({ bm25: { tokenize: { tokenizer: (s) => s.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean) } } })
  t.after(() => ws.destroy())
  await ws.index('docs/a.md', text)
  const out = await createWorkspaceTools(ws).mastra_workspace_search.execute({ query: 'password reset' })
  assert.equal(out, 'docs/a.md:5-5  1.000\n4-line four\n5:reset them with the tool\n\n[no more results]')
  // With the built-in tokenizer the lines are shown, numbered as in the file.
  const plain = new Workspace({ bm25: true })
  t.after(() => plain.destroy())
  await plain.index('docs/a.md', text)
  const shown = await createWorkspaceTools(plain).mastra_workspace_search.execute({ query: 'password reset' })
  assert.match(shown, /^1:The passwords are stored here$/m)
  assert.match(shown, /^5:reset them with the tool$/m)
})

test('a piece of a line longer than the chunks is shown as such (…), by the search tool and the command line; results say so in lineCut (it was shown as the whole line)', async (t) => {
  const line1 = `start of line one ${'filler '.repeat(580)}qvzk end`
  const dir = tree(t, { 'min.js': `${line1}\nsecond line\n`, 'short.md': 'qvzk in a short file\n' })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'] })
  t.after(() => ws.destroy())
  await ws.init()
  const results = await ws.search('qvzk', { topK: 10 })
  const piece = results.find((r) => r.id.startsWith('min.js#chunk-'))
  assert.ok(piece && line1.endsWith(piece.content) && piece.content.length < line1.length, 'the last piece of line 1')
  assert.deepEqual(piece.lineCut, { start: true, end: false })
  assert.equal(results.find((r) => r.id === 'short.md').lineCut, undefined, 'a whole line is not cut')
  const first = (await ws.search('start', { topK: 10 })).find((r) => r.id === 'min.js#chunk-0')
  assert.deepEqual(first.lineCut, { start: false, end: true })
  const [file] = await ws.search('qvzk', { group: 'file', topK: 1 })
  assert.deepEqual(file.lineCut, { start: true, end: false }, 'the best chunk’s, with group: file')
  const out = await createWorkspaceTools(ws).mastra_workspace_search.execute({ query: 'qvzk' })
  assert.match(out, /^1:…filler filler .*qvzk end$/m)
  const cli = spawnSync(process.execPath, [CLI, dir, 'qvzk', '--no-persist'], { encoding: 'utf8' })
  assert.equal(cli.status, 0, cli.stderr)
  assert.match(cli.stdout, /^ +1 {2}…filler .*qvzk end$/m)
  // Vector hits are marked as the index knows its chunks.
  const embedder = Object.assign(async (texts) => texts.map((x) => [x.includes('qvzk') ? 1 : 0.1, 1, x.length % 5]), { batch: true })
  const vectors = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'], embedder })
  t.after(() => vectors.destroy())
  await vectors.init()
  const hits = await vectors.search('qvzk', { mode: 'vector', topK: 50 })
  const cuts = Object.fromEntries(hits.filter((h) => h.id.startsWith('min.js#')).map((h) => [h.id, h.lineCut]))
  const ids = Object.keys(cuts).sort((a, b) => Number(a.split('-').pop()) - Number(b.split('-').pop()))
  assert.ok(ids.length >= 3, ids.join())
  assert.deepEqual(cuts[ids[0]], { start: false, end: true })
  assert.deepEqual(cuts[ids[1]], { start: true, end: false })
  assert.equal(cuts[ids[2]], undefined, 'line 2, whole')
})

test('chunks given to index() without their lines are not taken for pieces of a line (lineCut absent)', async (t) => {
  const ws = new Workspace({ bm25: true })
  t.after(() => ws.destroy())
  for (const n of [0, 1, 2]) await ws.index(`guide.md#chunk-${n}`, `paragraph ${n} about setup`, { metadata: { sourceFile: 'guide.md' } })
  const results = await ws.search('setup', { topK: 5 })
  assert.equal(results.length, 3)
  for (const r of results) assert.equal(r.lineCut, undefined, r.id)
})

/** Each line the tool shows (`N:text`, `N-text`) against line N of `file`: [shown, the file's]. */
const shownLines = (out, file) => [...out.matchAll(/^(\d+)[:-](.*)$/gm)].map((m) => [m[2], file.split('\n')[Number(m[1]) - 1]])

test("the search tool's line numbers are the file's with a tokenizer of the user's, a chunk without lineRange, the workspace-search/mastra Workspace and one without highlight() (lines were shown under other lines' numbers, past the file's end)", async (t) => {
  // A case-sensitive tokenizer that keeps one-letter words: the built-in words matched other lines.
  const tokenizer = (text) => text.split(/[^A-Za-z0-9_]+/).filter(Boolean)
  const own = new Workspace({ bm25: { tokenize: { tokenizer } } })
  t.after(() => own.destroy())
  const notes = 'foo\nfoo\nx\nx\n'
  await own.index('notes.txt', notes)
  const out = await createWorkspaceTools(own).mastra_workspace_search.execute({ query: 'Foo x' })
  const shown = shownLines(out, notes)
  assert.ok(shown.some(([text]) => text === 'x'), out)
  for (const [text, inFile] of shown) assert.equal(text, inFile, out)

  // A vector hit far down a file whose words the index's tokenizer does not match: no lineRange.
  const lines = Array.from({ length: 300 }, (_, i) => (i === 250 ? 'the needle is here' : `filler line number ${i + 1}`))
  const big = `${lines.join('\n')}\n`
  const dir = tree(t, { 'big.txt': big })
  const embed = (text) => [text.toLowerCase().includes('needle') ? 1 : 0.01, 0.5]
  const vectors = new Workspace({
    filesystem: new LocalFilesystem({ basePath: dir }), autoIndexPaths: ['.'], chunking: { maxChars: 1000, overlapLines: 0 },
    bm25: { tokenize: { tokenizer } }, embedder: Object.assign(async (texts) => texts.map(embed), { batch: true }),
  })
  t.after(() => vectors.destroy())
  await vectors.init()
  const [hit] = await vectors.search('Needle', { topK: 1, mode: 'vector' })
  assert.match(hit.id, /#chunk-[1-9]/)
  const vectorOut = await createWorkspaceTools(vectors).mastra_workspace_search.execute({ query: 'Needle', mode: 'vector', topK: 1 })
  for (const [text, inFile] of shownLines(vectorOut, big)) assert.equal(text, inFile, vectorOut)

  // workspace-search/mastra's Workspace (its native workspace's highlight()), and an object without one.
  const { Workspace: MastraEntryWorkspace, LocalFilesystem: MastraFs } = await import('../lib/mastra/index.mjs')
  const stems = 'the\nrunning\nruns\n'
  const stemDir = tree(t, { 'notes.txt': stems })
  const entry = new MastraEntryWorkspace({ filesystem: new MastraFs({ basePath: stemDir }), bm25: true, autoIndexPaths: ['.'] })
  t.after(() => entry.destroy())
  await entry.init()
  const entryOut = await createWorkspaceTools(entry).mastra_workspace_search.execute({ query: 'the running' })
  assert.deepEqual(shownLines(entryOut, stems).map(([text]) => text), ['the', 'running', 'runs'], entryOut)
  for (const [text, inFile] of shownLines(entryOut, stems)) assert.equal(text, inFile, entryOut)
  const foreign = { search: (q, o) => entry.search(q, o), canBM25: true, canVector: false, canHybrid: false, filesystem: { readOnly: true } }
  const foreignOut = await createWorkspaceTools(foreign).mastra_workspace_search.execute({ query: 'the running' })
  assert.match(foreignOut, /notes\.txt:2-3/)
  for (const [text, inFile] of shownLines(foreignOut, stems)) assert.equal(text, inFile, foreignOut)
})
